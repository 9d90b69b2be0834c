#if Server && os(Linux)
import Foundation
import ImagoServer
import Testing

/// Every option with malformed, out-of-range or absurd values (negative,
/// 10^9, NaN, empty, too many arguments) is a 404 (imgproxy's "Invalid URL") whose message names the
/// option.
@Suite struct BadValuesTests {
    static let cases: [(segment: String, names: String)] = [
        ("rs:stretch:10:10", "resizing type"), ("rs:fit:-1:10", "width"), ("rs:fit:10:1000000000", "height"), ("rs:fit:10:10:maybe", "enlarge"),
        ("rs:fit:1:1:0:0:ce:0:0:9", "rs"), ("s:nan", "width"), ("rt:", "resizing type"), ("w:1e9", "width"), ("h:-5", "height"),
        ("mw:abc", "min-width"), ("mh:99999", "min-height"), ("z:0", "zoom"), ("z:nan", "zoom"), ("z:1:2:3", "z takes"), ("dpr:-1", "dpr"),
        ("dpr:1e9", "dpr"), ("el:2", "enlarge"), ("ex:yes", "extend"), ("ex:1:up", "gravity"), ("exar:1:sm", "gravity"),
        ("g:middle", "gravity"), ("g:fp:2:0", "gravity fp"), ("g:nowe:a", "gravity offset"), ("g:sm:1", "gravity sm"),
        ("c:-1:10", "crop width"), ("c:10:nan", "crop height"), ("c:10:10:up", "gravity"), ("t:300", "trim"), ("t:nan", "trim"),
        ("t:10:zzzzzz", "background"), ("t:10::2", "trim"), ("pd:-1", "padding"), ("pd:1:2:3:4:5", "pd"), ("ar:maybe", "auto_rotate"),
        ("rot:45", "rotate"), ("rot:nan", "rotate"), ("fl:2", "flip"), ("fl:1:1:1", "fl"), ("bg:12", "background"),
        ("bg:256:0:0", "background"), ("bg:1:2", "background"), ("mrd:big", "max_result_dimension"), ("q:101", "quality"),
        ("q:-1", "quality"), ("fq:jpeg", "format_quality"), ("fq:tga:50", "format"), ("fq:jpeg:200", "quality"),
        ("mb:-1", "max_bytes"), ("mb:lots", "max_bytes"), ("cb:a:b", "cb"), ("exp:soon", "expires"), ("fn:!!!:1", "filename"),
        ("fn:a:b:c", "fn"), ("att:2", "return_attachment"), ("f:tga", "format"), ("f:", "format"), ("bl:-1", "blur"),
        ("bl:1e9", "blur"), ("bl:nan", "blur"), ("sh:101", "sharpen"), ("pix:-3", "pixelate"), ("pix:1e9", "pixelate"),
        ("wm:2", "watermark"), ("wm:0.5:fp", "watermark position"), ("wm:1:ce:x", "watermark"), ("wm:1:ce:0:0:nan", "watermark"),
        ("wm:1:ce:0:0:1:1:1:1", "wm"), ("skp:", "skip_processing"), ("skp:tga", "skip_processing"), ("raw:2", "raw"),
        ("sm:2", "strip_metadata"), ("kcr:x", "keep_copyright"), ("scp:", "strip_color_profile"), ("pr:missing", "preset"),
        ("unknown:1", "unknown option"),
    ]

    @Test func everyBadValueIsA404NamingTheOption() throws {
        var failures: [String] = []
        for (segment, names) in Self.cases {
            do {
                _ = try ImageServerPath(parsing: "/insecure/\(segment)/plain/http%3A%2F%2Fx%2Fa.png")
                failures.append("\(segment): accepted")
            } catch {
                if error.status != 404 || error.code != .badOptions { failures.append("\(segment): \(error.status) \(error.code)") }
                if !error.message.lowercased().contains(names.lowercased()) { failures.append("\(segment): \"\(error.message)\" does not name \(names)") }
                let body = String(decoding: error.jsonBody, as: UTF8.self)
                if !body.contains("\"code\":\"bad_options\"") { failures.append("\(segment): body \(body)") }
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}
#endif
