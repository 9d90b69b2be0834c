import Foundation
import Imago
import ImagoTesting
import Testing

/// What ``ImageLoading`` promises, run against the pipeline, the client and
/// both doubles, so that code tested with `MockImageLoader` meets the same
/// behaviour in production.
@Suite(.timeLimit(.minutes(1))) struct ImageLoadingContractTests {
    @Test(arguments: LoaderSubject.all)
    func aStubbedImageIsReturned(_ subject: LoaderSubject) async throws {
        let (loader, stub) = subject.make()
        stub(url("red"), .success(red))
        stub(url("blue"), .success(blue))

        #expect(try await loader.image(from: url("red")) == red)
        #expect(try await loader.image(from: url("blue")) == blue)
        #expect(try await loader.image(from: url("red")) == red)
    }

    @Test(arguments: LoaderSubject.all)
    func aFailureIsThePipelinesErrorWithTheCauseBeneath(_ subject: LoaderSubject) async {
        let (loader, stub) = subject.make()
        stub(url("down"), .failure(URLError(.networkConnectionLost)))

        let error = await #expect(throws: ImagePipelineError.self) { try await loader.image(from: url("down")) }

        #expect(error?.code == .dataLoadingFailed)
        #expect(error?.url == url("down"))
        #expect(error?.first(URLError.self)?.code == .networkConnectionLost)
    }

    @Test(arguments: LoaderSubject.all)
    func aURLWithNoStubFailsWithATypedError(_ subject: LoaderSubject) async {
        let (loader, _) = subject.make()

        let error = await #expect(throws: ImagePipelineError.self) { try await loader.image(from: url("nothing")) }

        #expect(error?.first(MockDataLoader.Unstubbed.self)?.url == url("nothing"))
    }

    @Test(arguments: LoaderSubject.all)
    func aCancelledCallerGetsCancellationError(_ subject: LoaderSubject) async {
        let (loader, stub) = subject.make()
        stub(url("red"), .success(red))
        let started = Recorder<Void>()

        let task = Task {
            await started.waitForValues(1)   // cancelled before it asks
            return try await loader.image(from: url("red"))
        }
        task.cancel()
        started.record(())

        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
