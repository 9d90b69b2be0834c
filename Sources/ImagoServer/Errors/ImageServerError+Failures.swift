#if Server
import Imago

extension ImageServerError {
    /// The server's answer for what the pipeline or an encoder threw: the
    /// ``Code`` documented for each kind of source failure (anything it
    /// does not recognise is ``Code/sourceFailed``).
    init(answering error: any Error) {
        if let error = error as? ImageServerError {
            self = error
            return
        }
        let layered = error as? any LayeredError
        if error is WorkDeadlineExceeded || layered?.first(WorkDeadlineExceeded.self) != nil {
            self = .timedOut
        } else if let refused = layered?.first(ImageServerError.self) {
            self = refused
        } else if let loading = layered?.first(DataLoadingError.self) {
            self = Self(loading: loading)
        } else if let response = layered?.first(ResponseError.self) {
            self = Self(response: response)
        } else if let decoding = layered?.first(ImageDecodingError.self) {
            switch decoding.code {
            case .tooManyPixels, .tooManyFrames, .tooComplex:
                self = ImageServerError(.sourceTooLarge, "the source is too large: \(decoding.message)")
            case .unsupportedFormat:
                self = ImageServerError(.sourceNotAnImage, "the source is not an image in a format the server reads")
            default:
                self = ImageServerError(.undecodable, "the source could not be decoded: \(decoding.message)")
            }
        } else if let encoding = layered?.first(ImageEncodingError.self) {
            self = ImageServerError(.cannotWrite, "the image could not be written: \(encoding.message)")
        } else if error is CancellationError {
            self = ImageServerError(.sourceFailed, "the load was cancelled")
        } else {
            self = ImageServerError(.sourceFailed, "the source failed: \(error)")
        }
    }

    private init(loading: DataLoadingError) {
        switch loading.code {
        case .responseTooLarge:
            self.init(.sourceTooLarge, "the source is too large: \(loading.message)")
        case .timedOut:
            self.init(.sourceTimedOut, "the source timed out: \(loading.message)")
        case .cannotConnect, .tooManyRedirects, .redirectLoop:
            self.init(.sourceUnreachable, "the source is unreachable: \(loading.message)")
        case .connectionLost:
            self.init(.sourceIncomplete, "the source's response is incomplete: \(loading.message)")
        default:
            self.init(.sourceFailed, "the source failed: \(loading.message)")
        }
    }

    private init(response: ResponseError) {
        // An error status says more than the type of the page that came with it.
        if let status = response.statusCode, !(200...299).contains(status) {
            if status == 404 {
                self.init(.sourceNotFound, "the source answered 404")
            } else if (400...499).contains(status) {
                self.init(.sourceRefused(status), "the source answered \(status)")
            } else {
                self.init(.sourceFailed, "the source answered \(status)")
            }
            return
        }
        switch response.code {
        case .partialContent:
            // imgproxy's answer to part of an image: 404, "source is unreachable".
            self.init(.sourceUnreachable, "the source is unreachable: it sent part of the image (\(response))")
        case .unacceptableContentType:
            self.init(.sourceNotAnImage, "the source is not an image (Content-Type \(response.contentType ?? "missing"))")
        default:
            self.init(.sourceFailed, "the source's response was refused: \(response)")
        }
    }
}
#endif
