import Imago

extension ImageClient {
    /// A client over ``ImagePipeline/shared`` delivering on the main queue.
    public static let shared = ImageClient(pipeline: .shared)
}
