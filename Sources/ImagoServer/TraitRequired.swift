#if !Server
// Without the `Server` trait this module is empty. So that a package that
// forgot the trait gets a message naming it, instead of "cannot find
// 'ImageServer' in scope", the types a user reaches for first exist here
// as unavailable stand-ins. (An `#error` would say it sooner, at the
// `import`, but SwiftPM builds every target of the root package, so it
// would break `swift build` in this repository for everyone without the
// trait.)

/// Built only with the package trait `Server`.
@available(*, unavailable, message: "ImagoServer is built only with the package trait \"Server\": in Package.swift (swift-tools-version 6.1 or later), .package(url: \"https://github.com/imago/imago\", from: \"0.10.0\", traits: [\"Server\"])")
public struct ImageServer<Context> {
    @available(*, unavailable, message: "ImagoServer is built only with the package trait \"Server\": in Package.swift (swift-tools-version 6.1 or later), .package(url: \"https://github.com/imago/imago\", from: \"0.10.0\", traits: [\"Server\"])")
    public init(configuration: Any, _ arguments: Any...) {}
}

/// Built only with the package trait `Server`.
@available(*, unavailable, message: "ImagoServer is built only with the package trait \"Server\": in Package.swift (swift-tools-version 6.1 or later), .package(url: \"https://github.com/imago/imago\", from: \"0.10.0\", traits: [\"Server\"])")
public struct ImageServerConfiguration {
    @available(*, unavailable, message: "ImagoServer is built only with the package trait \"Server\": in Package.swift (swift-tools-version 6.1 or later), .package(url: \"https://github.com/imago/imago\", from: \"0.10.0\", traits: [\"Server\"])")
    public init(_ arguments: Any...) {}
}

/// Built only with the package trait `Server`.
@available(*, unavailable, message: "ImagoServer is built only with the package trait \"Server\": in Package.swift (swift-tools-version 6.1 or later), .package(url: \"https://github.com/imago/imago\", from: \"0.10.0\", traits: [\"Server\"])")
public struct ImageServerPath {
    @available(*, unavailable, message: "ImagoServer is built only with the package trait \"Server\": in Package.swift (swift-tools-version 6.1 or later), .package(url: \"https://github.com/imago/imago\", from: \"0.10.0\", traits: [\"Server\"])")
    public init(_ arguments: Any...) {}
}

/// Built only with the package trait `Server`.
@available(*, unavailable, message: "ImagoServer is built only with the package trait \"Server\": in Package.swift (swift-tools-version 6.1 or later), .package(url: \"https://github.com/imago/imago\", from: \"0.10.0\", traits: [\"Server\"])")
public struct ProcessingOptions {
    @available(*, unavailable, message: "ImagoServer is built only with the package trait \"Server\": in Package.swift (swift-tools-version 6.1 or later), .package(url: \"https://github.com/imago/imago\", from: \"0.10.0\", traits: [\"Server\"])")
    public init(_ arguments: Any...) {}
}
#endif
