import ArgumentParser
import Imago
import ImagoAsyncHTTPClient

/// The network loaders the command line can use.
public enum NetworkLoaderKind: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// `AsyncHTTPClientDataLoader` (SwiftNIO): the command line's default.
    case asynchttpclient
    /// `URLSessionDataLoader` (FoundationNetworking): the library's default.
    case urlsession

    /// The loader, with retries, allowing `connectionsPerHost` connections to one host.
    public func make(connectionsPerHost: Int) -> any DataLoading {
        switch self {
        case .asynchttpclient:
            var configuration = AsyncHTTPClientDataLoader.Configuration()
            configuration.maximumConnectionsPerHost = connectionsPerHost
            return RetryingDataLoader(wrapping: AsyncHTTPClientDataLoader(configuration: configuration))
        case .urlsession:
            var configuration = URLSessionDataLoader.Configuration()
            configuration.maximumConnectionsPerHost = connectionsPerHost
            return RetryingDataLoader(wrapping: URLSessionDataLoader(configuration: configuration))
        }
    }
}
