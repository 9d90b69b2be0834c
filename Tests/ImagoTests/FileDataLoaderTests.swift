import Foundation
import Imago
import ImagoTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The file loader against a real temporary directory.
@Suite struct FileDataLoaderTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-file-loader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    private func write(_ data: Data, named name: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    @Test func readsTheWholeFileInChunksWithProgress() async throws {
        let body = Data((0..<10_000).map { UInt8($0 % 251) })
        let url = try write(body, named: "photo.bin")
        let reports = Reports()
        let (data, response) = try await FileDataLoader(chunkSize: 4096).data(for: URLRequest(url: url)) { reports.append($0) }
        #expect(data == body)
        #expect(response.expectedContentLength == 10_000)
        #expect(response.mimeType == nil)
        #expect(!(response is HTTPURLResponse))
        #expect(reports.values.map(\.completed) == [4096, 8192, 10_000])
    }

    @Test func emptyFileLoadsAsEmptyData() async throws {
        let url = try write(Data(), named: "empty.png")
        let (data, _) = try await FileDataLoader().data(for: URLRequest(url: url))
        #expect(data.isEmpty)
    }

    @Test func missingFileFailsAsUnreadableWithTheSystemError() async {
        let url = directory.appendingPathComponent("missing.png")
        let error = await caughtError { try await FileDataLoader().data(for: URLRequest(url: url)) } as? DataLoadingError
        #expect(error?.code == .fileUnreadable)
        #expect(error?.url == url)
        #expect(error?.underlying != nil)
    }

    @Test func directoryFailsAsUnreadable() async {
        let error = await caughtError { try await FileDataLoader().data(for: URLRequest(url: directory)) } as? DataLoadingError
        #expect(error?.code == .fileUnreadable)
    }

    @Test func fileOverTheLimitFailsBeforeReading() async throws {
        let url = try write(Data(count: 101), named: "big.bin")
        let error = await caughtError { try await FileDataLoader(maximumResponseSize: 100).data(for: URLRequest(url: url)) } as? DataLoadingError
        #expect(error?.code == .responseTooLarge)
    }

    @Test func nonFileURLFailsAsUnsupportedScheme() async {
        let error = await caughtError { try await FileDataLoader().data(for: URLRequest(url: exampleURL)) } as? DataLoadingError
        #expect(error?.code == .unsupportedScheme)
    }

    @Test func aCancelledReaderStopsBetweenChunks() async throws {
        let url = try write(Data(count: 10), named: "a.bin")
        let read = Task {
            let loaded = try await FileDataLoader(chunkSize: 4).load(URLRequest(url: url))
            var received = 0
            for try await chunk in loaded.body {
                received += chunk.count
                withUnsafeCurrentTask { $0?.cancel() }
            }
            return received
        }
        #expect(try await read.value == 4)
    }

    @Test func networkClientDecodesFileURLsWithoutAStatus() async throws {
        let url = try write(TestImages.pngSignature, named: "cat.png")
        let decoder = MockImageDecoder()
        let client = NetworkClient(loader: DataLoader(network: MockDataLoader()), imageDecoder: decoder)
        _ = try await client.image(for: URLRequest(url: url))
        #expect(decoder.calls.map(\.data) == [TestImages.pngSignature])
    }
}

@Suite struct DataLoaderTests {
    @Test func routesHTTPAndHTTPSToTheNetworkLoader() async throws {
        let network = MockDataLoader()
        let loader = DataLoader(network: network, file: MockDataLoader())
        for string in ["http://a.example/x.png", "HTTPS://a.example/y.png"] {
            network.stub(string, .image(TestImages.pngSignature))
            _ = try await loader.data(for: URLRequest(url: URL(string: string)!))
        }
        #expect(network.requests.count == 2)
    }

    @Test func routesFileURLsToTheFileLoader() async throws {
        let file = MockDataLoader()
        let url = URL(fileURLWithPath: "/images/cat.png")
        file.stub(url, .image(TestImages.pngSignature))
        _ = try await DataLoader(network: MockDataLoader(), file: file).data(for: URLRequest(url: url))
        #expect(file.requests.map(\.url) == [url])
    }

    @Test(arguments: ["ftp://a.example/x.png", "data:image/png;base64,AAAA", "mailto:a@example.com"])
    func otherSchemesFailAsUnsupported(string: String) async {
        let error = await caughtError {
            try await DataLoader(network: MockDataLoader(), file: MockDataLoader()).data(for: URLRequest(url: URL(string: string)!))
        } as? DataLoadingError
        #expect(error?.code == .unsupportedScheme)
    }
}
