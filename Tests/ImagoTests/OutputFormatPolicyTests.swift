import Imago
import Testing

/// The one answer to "which format is written when nobody asked".
@Suite struct OutputFormatPolicyTests {
    @Test(arguments: [
        (ImageFormat?.some(.jpeg), false, ImageFormat.jpeg),
        (.png, false, .png), (.png, true, .png),
        (.webp, false, .webp), (.webp, true, .webp),
        (.avif, false, .avif), (.avif, true, .avif),
        (.gif, false, .png), (.gif, true, .png),
        (.heic, false, .jpeg), (.heic, true, .png),
        (.jxl, false, .jpeg), (.jxl, true, .png),
        (.bmp, false, .jpeg), (.bmp, true, .png),
        (.ico, false, .jpeg), (.ico, true, .png),
        (.tiff, false, .jpeg), (.tiff, true, .png),
        (nil, false, .jpeg), (nil, true, .png),
        (.jpeg, true, .png),   // alpha added after decoding (rounded corners)
    ] as [(ImageFormat?, Bool, ImageFormat)])
    func eachSourceHasOneOutputFormat(source: ImageFormat?, hasAlpha: Bool, expected: ImageFormat) {
        #expect(ImageFormat.defaultOutputFormat(forSource: source, hasAlpha: hasAlpha) == expected)
    }

    /// imgproxy's preferred formats (its default list): the source's own
    /// when listed, else the first that keeps alpha or animates, else the first.
    @Test(arguments: [
        (ImageFormat?.some(.jpeg), false, false, ImageFormat?.some(.jpeg)),
        (.webp, false, false, .jpeg), (.webp, true, false, .png), (.avif, false, false, .jpeg), (.gif, false, false, .gif),
        (.png, true, false, .png), (.heic, true, false, .png), (nil, false, false, .jpeg),
        (.gif, true, true, .gif), (.webp, true, true, .gif), (.png, false, true, .gif),
    ] as [(ImageFormat?, Bool, Bool, ImageFormat?)])
    func preferredFormatsDecideAsImgproxys(source: ImageFormat?, hasAlpha: Bool, animated: Bool, expected: ImageFormat?) {
        var policy = OutputPolicy()
        policy.preferredFormats = [.jpeg, .png, .gif]
        let decision = policy.decision(forSource: source, hasAlpha: hasAlpha, isAnimated: animated)
        #expect(decision.format == expected)
        #expect(decision.isAnimated == animated)
        // Negotiation still comes first.
        var negotiating = policy
        negotiating.automatic = [.webp]
        #expect(negotiating.decision(forSource: source, hasAlpha: hasAlpha, accept: "image/webp").format == .webp)
        // Without a list that animates, an animation becomes a still in the first format.
        policy.preferredFormats = [.jpeg]
        #expect(policy.animatedFormat(forSource: source) == nil)
    }

    @Test func theChoiceIsAlwaysAFormatImagoWrites() {
        for source in ImageFormat.allCases.map(Optional.some) + [nil] {
            for hasAlpha in [false, true] {
                let chosen = ImageFormat.defaultOutputFormat(forSource: source, hasAlpha: hasAlpha)
                #expect(chosen.isWritable)
                #expect(!hasAlpha || chosen.storesAlpha)
            }
        }
        #expect(ImageFormat.writableFormats == [.jpeg, .png, .gif, .webp, .avif, .jxl, .heic, .bmp, .ico, .tiff])
        #expect(ImageFormat.allCases.filter(\.isWritable) == ImageFormat.allCases)
    }

}

/// The one output decision: format, animation, quality and `Vary: Accept`,
/// as the image server, `imago fetch` and library users get it.
@Suite struct OutputPolicyTests {
    static let both = "image/avif,image/webp,*/*;q=0.8"

    @Test(arguments: [
        // (automatic, enforced, requested, Accept) -> (format, varies): imgproxy's detection
        ([ImageFormat.avif, .webp], [ImageFormat](), ImageFormat?.none, both, ImageFormat?.some(.avif), true),
        ([.avif, .webp], [], nil, "image/webp", .webp, true),
        ([.avif, .webp], [], nil, "image/avif;q=0,image/webp", .webp, true),
        ([.avif, .webp], [], nil, "image/png", nil, true),
        ([.avif], [], .png, both, .png, false),
        ([], [.webp], .png, both, .webp, true),
        ([], [.webp], .png, "image/png", .png, true),
        ([], [.avif, .webp], nil, both, .avif, true),
        ([], [], .jpeg, both, .jpeg, false),
        ([], [], nil, both, nil, false),
        ([.jxl, .avif, .webp], [], nil, "image/jxl,image/avif,image/webp", .jxl, true),
        ([.jxl, .avif], [], nil, both, .avif, true),
        ([], [.jxl], .png, "image/jxl", .jxl, true),
        ([.webp], [], nil, nil, nil, true),
    ] as [([ImageFormat], [ImageFormat], ImageFormat?, String?, ImageFormat?, Bool)])
    func negotiationFollowsAccept(automatic: [ImageFormat], enforced: [ImageFormat], requested: ImageFormat?, accept: String?,
                                  expected: ImageFormat?, varies: Bool) {
        let choice = OutputPolicy(automatic: Set(automatic), enforced: Set(enforced)).negotiated(requested: requested, accept: accept)
        #expect(choice.format == expected)
        #expect(choice.variesWithAccept == varies)
    }

    @Test(arguments: [
        // (source, alpha, animated, requested, automatic WebP, Accept) -> (format, stays animated, varies)
        (ImageFormat?.some(.jpeg), false, false, ImageFormat?.some(.png), true, "image/webp", ImageFormat.png, false, false),
        (.jpeg, false, false, nil, true, "image/avif,image/webp,*/*;q=0.8", .webp, false, true),
        (.jpeg, false, false, nil, true, "image/webp;q=0", .jpeg, false, true),
        (.png, false, false, nil, false, "image/webp", .png, false, false),
        (.gif, false, false, nil, false, nil, .png, false, false),      // a still GIF becomes PNG
        (.gif, true, true, nil, false, nil, .gif, true, false),         // an animated GIF stays one
        (.gif, true, true, .png, false, nil, .png, false, false),       // asked for as PNG: a still PNG, as imgproxy
        (.gif, true, true, .jpeg, false, nil, .jpeg, false, false),
        (.gif, true, true, .webp, false, nil, .webp, true, false),
        (.png, true, true, nil, false, nil, .webp, true, false),        // APNG becomes animated WebP
        (.avif, false, true, nil, false, nil, .webp, true, false),
        (.webp, true, true, nil, false, nil, .webp, true, false),
        (.gif, true, true, nil, true, "image/avif,image/webp", .webp, true, true),
        (nil, false, false, nil, false, nil, .jpeg, false, false),
    ] as [(ImageFormat?, Bool, Bool, ImageFormat?, Bool, String?, ImageFormat, Bool, Bool)])
    func theDecisionIsAsDocumented(source: ImageFormat?, hasAlpha: Bool, isAnimated: Bool, requested: ImageFormat?,
                                   automaticWebP: Bool, accept: String?, format: ImageFormat, staysAnimated: Bool, varies: Bool) {
        let policy = OutputPolicy(automatic: automaticWebP ? [.webp] : [])
        let decision = policy.decision(forSource: source, hasAlpha: hasAlpha, isAnimated: isAnimated, requested: requested, accept: accept)
        #expect(decision.format == format)
        #expect(decision.isAnimated == staysAnimated)
        #expect(decision.variesWithAccept == varies)
    }

    @Test func animatedAVIFIsNeverNegotiated() {
        let policy = OutputPolicy(enforced: [.avif])
        #expect(policy.negotiated(requested: nil, accept: "image/avif", animated: true).format == nil)
        #expect(policy.decision(forSource: .gif, hasAlpha: true, isAnimated: true, accept: "image/avif").format == .gif)
        #expect(policy.decision(forSource: .gif, hasAlpha: true, isAnimated: false, accept: "image/avif").format == .avif)
    }

    @Test func apngIsAnOptIn() {
        let policy = OutputPolicy(animatedFormats: [.gif, .webp, .png])
        let decision = policy.decision(forSource: .png, hasAlpha: true, isAnimated: true)
        #expect(decision.format == .png && decision.isAnimated)
        #expect(OutputPolicy(animatedFormats: []).decision(forSource: .gif, hasAlpha: true, isAnimated: true).format == .png)
    }

    @Test func theQualityIsTheRequestsThenTheFormatsThenTheDefault() {
        let policy = OutputPolicy(qualities: [.webp: 70], defaultQuality: 82)
        #expect(policy.decision(forSource: .jpeg, hasAlpha: false, quality: 50).quality == 50)
        #expect(policy.decision(forSource: .webp, hasAlpha: false).quality == 70)
        #expect(policy.decision(forSource: .jpeg, hasAlpha: false).quality == 82)
        #expect(OutputPolicy().decision(forSource: .jpeg, hasAlpha: false).quality == nil)
    }

    @Test(arguments: [("image/webp", true), ("image/webp;q=0", false), ("image/png, image/webp ; q=0.5", true),
                      ("IMAGE/WEBP", true), ("image/webpx", false), ("", false)])
    func acceptIsReadAsHTTPSays(accept: String, accepted: Bool) {
        #expect(OutputPolicy.accepts("image/webp", in: accept) == accepted)
    }
}
