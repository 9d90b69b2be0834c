import Foundation
import Hummingbird
import ImageServerApp
import ImagoServer

// The signing key and salt, as hexadecimal (`openssl rand -hex 32`), from the environment.
let environment = ProcessInfo.processInfo.environment
let key = try SigningKey(hexKey: environment["IMAGO_KEY"] ?? "", hexSalt: environment["IMAGO_SALT"] ?? "")
let app = Application(
    router: buildRouter(images: imageConfiguration(signingKey: key)),
    configuration: .init(address: .hostname("127.0.0.1", port: 8080))
)
try await app.runService()
