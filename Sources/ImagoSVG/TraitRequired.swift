#if !Server
// Without the `Server` trait this module is empty (its XML reader and the
// SVG child are built with the server). So that a package that forgot the
// trait gets a message naming it, the type a user reaches for exists here
// as an unavailable stand-in (as in ImagoServer).

/// Built only with the package trait `Server`.
@available(*, unavailable, message: "ImagoSVG is built only with the package trait \"Server\": in Package.swift (swift-tools-version 6.1 or later), .package(url: \"https://github.com/imago/imago\", from: \"0.10.0\", traits: [\"Server\"])")
public struct SVGSanitizer {
    @available(*, unavailable, message: "ImagoSVG is built only with the package trait \"Server\": in Package.swift (swift-tools-version 6.1 or later), .package(url: \"https://github.com/imago/imago\", from: \"0.10.0\", traits: [\"Server\"])")
    public init(_ arguments: Any...) {}
}
#endif
