import Foundation
import Imago
import ImagoTesting
import Testing

/// What ``ImageService`` promises, run against ``ImageClient`` and
/// ``MockImageService`` alike so that the double cannot drift from the real
/// thing. No test waits on a clock: an immediate or manual queue decides
/// when completions run, and displays are awaited, not polled.
@Suite(.timeLimit(.minutes(1))) struct ImageServiceContractTests {
    @Test(arguments: ServiceSubject.all)
    func aCacheMissWithImmediateQueuesCompletesBeforeTheCallReturns(_ subject: ServiceSubject) throws {
        let (service, stub) = subject.make(ImmediateQueue())
        stub(url("red"), .success(red))
        let results = Recorder<Result<Image, any Error>>()

        let task = service.downloadImage(from: url("red"), completion: results.record)

        #expect(task != nil, "a miss has a task")
        #expect(results.count == 1)
        #expect(try results.last?.get() == red)
    }

    @Test(arguments: ServiceSubject.all)
    func aRepeatedURLThatSucceededHasNoTaskAndCompletesSynchronously(_ subject: ServiceSubject) throws {
        let (service, stub) = subject.make(ManualQueue())   // a queue that would hold a loaded image
        stub(url("red"), .success(red))
        service.downloadImage(from: url("red")) { _ in }
        let results = Recorder<Result<Image, any Error>>()

        let task = service.downloadImage(from: url("red"), completion: results.record)

        #expect(task == nil)
        #expect(results.count == 1, "a memory hit calls back at once, not on the queue")
        #expect(try results.last?.get() == red)
    }

    @Test(arguments: ServiceSubject.all)
    func thePlaceholderComesFirstThenTheImage(_ subject: ServiceSubject) {
        let (service, stub) = subject.make(ImmediateQueue())
        stub(url("red"), .success(red))
        let target = RecordingImageTarget()

        let display = service.setImage(on: target, from: url("red"), placeholder: placeholder)

        #expect(target.displayed == [placeholder, red])
        #expect(display.outcome?.image == red)
        #expect(service.displayTask(for: target) == nil, "nothing is in flight once it is shown")
    }

    @Test(arguments: ServiceSubject.all)
    func anImageInMemoryIsShownWithNoPlaceholder(_ subject: ServiceSubject) {
        let (service, stub) = subject.make(ManualQueue())
        stub(url("red"), .success(red))
        service.downloadImage(from: url("red")) { _ in }
        let target = RecordingImageTarget()

        let display = service.setImage(on: target, from: url("red"), placeholder: placeholder)

        #expect(target.displayed == [red])
        #expect(display.outcome?.image == red)
    }

    @Test(arguments: ServiceSubject.all)
    func aFailureKeepsThePlaceholderAndReportsTheError(_ subject: ServiceSubject) async {
        let (service, stub) = subject.make(ImmediateQueue())
        stub(url("down"), .failure(URLError(.notConnectedToInternet)))
        let target = RecordingImageTarget()

        let outcome = await service.setImage(on: target, from: url("down"), placeholder: placeholder).finished()

        #expect(target.displayed == [placeholder])
        let error = outcome.error as? ImagePipelineError
        #expect(error?.code == .dataLoadingFailed)
        #expect(error?.first(URLError.self)?.code == .notConnectedToInternet)
        #expect(ImagePipelineError.Code.dataLoadingFailed.matches(outcome.error!))
    }

    @Test(arguments: ServiceSubject.all)
    func aReusedTargetCancelsTheOldLoadAndNeverShowsItsImage(_ subject: ServiceSubject) async {
        let main = ManualQueue()
        let (service, stub) = subject.make(main)
        stub(url("red"), .success(red))
        stub(url("blue"), .success(blue))
        let cell = RecordingImageTarget()

        let first = service.setImage(on: cell, from: url("red"), placeholder: placeholder)
        #expect(service.displayTask(for: cell) === first)
        let second = service.setImage(on: cell, from: url("blue"), placeholder: placeholder)
        #expect(service.displayTask(for: cell) === second)
        main.runAll()

        #expect(cell.displayed == [placeholder, placeholder, blue])
        #expect(first.outcome?.isCancelled == true)
        #expect(await second.finished().image == blue)
    }

    @Test(arguments: ServiceSubject.all)
    func aNilURLCancelsAndShowsThePlaceholder(_ subject: ServiceSubject) {
        let main = ManualQueue()
        let (service, stub) = subject.make(main)
        stub(url("red"), .success(red))
        let cell = RecordingImageTarget()

        let loading = service.setImage(on: cell, from: url("red"), placeholder: placeholder)
        let cleared = service.setImage(on: cell, from: nil, placeholder: nil)
        main.runAll()

        #expect(cell.displayed == [placeholder, nil])
        #expect(loading.outcome?.isCancelled == true)
        #expect(cleared.outcome.map { if case .noURL = $0 { true } else { false } } == true)
    }

    @Test(arguments: ServiceSubject.all)
    func cancellingADisplayKeepsWhatTheTargetShows(_ subject: ServiceSubject) {
        let main = ManualQueue()
        let (service, stub) = subject.make(main)
        stub(url("red"), .success(red))
        let cell = RecordingImageTarget()

        let display = service.setImage(on: cell, from: url("red"), placeholder: placeholder)
        display.cancel()
        main.runAll()

        #expect(cell.displayed == [placeholder])
        #expect(service.displayTask(for: cell) == nil)
        #expect(display.outcome?.isCancelled == true)
    }

    @Test(arguments: ServiceSubject.all)
    func theDisplayInFlightCanBeReadAndAwaited(_ subject: ServiceSubject) async {
        let main = ManualQueue()
        let (service, stub) = subject.make(main)
        stub(url("red"), .success(red))
        let cell = RecordingImageTarget()

        let display = service.setImage(on: cell, from: url("red"), placeholder: placeholder)
        #expect(service.displayTask(for: cell) === display)
        #expect(display.url == url("red"))
        #expect(!display.isFinished)
        #expect(main.pendingCount == 1)

        main.runAll()
        #expect(await display.finished().image == red)
        #expect(service.displayTask(for: cell) == nil)
    }

    @Test(arguments: ServiceSubject.all)
    func downloadErrorsMatchWithoutUnwrapping(_ subject: ServiceSubject) async throws {
        let (service, stub) = subject.make(nil)
        stub(url("down"), .failure(URLError(.timedOut)))
        let results = Recorder<Result<Image, any Error>>()

        service.downloadImage(from: url("down"), completion: results.record)

        let result = try #require(results.last)
        #expect(throws: ImagePipelineError.self) { try result.get() }
        if case .failure(let error) = result {
            #expect(ImagePipelineError.Code.dataLoadingFailed.matches(error))
            #expect((error as? ImagePipelineError)?.first(URLError.self)?.code == .timedOut)
        }
    }

    @Test(arguments: ServiceSubject.all)
    func imageFromURLReturnsTheImageOrThrows(_ subject: ServiceSubject) async throws {
        let (service, stub) = subject.make(nil)
        stub(url("red"), .success(red))
        stub(url("down"), .failure(URLError(.cannotFindHost)))

        #expect(try await service.image(from: url("red")) == red)
        let error = await #expect(throws: ImagePipelineError.self) { try await service.image(from: url("down")) }
        #expect(error?.first(URLError.self)?.code == .cannotFindHost)
    }
}
