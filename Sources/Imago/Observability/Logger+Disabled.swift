import Logging

extension Logger {
    /// A logger that drops everything: the default wherever Imago takes a
    /// logger, so that a library never writes where its application did
    /// not ask it to.
    public static var disabled: Logger {
        Logger(label: "imago.disabled") { _ in SwiftLogNoOpLogHandler() }
    }
}
