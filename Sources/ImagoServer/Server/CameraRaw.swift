#if Server
import Foundation
import Imago

/// Camera raw files, which Imago does not develop: many are TIFF inside
/// (CR2, NEF, DNG...), and a TIFF reader would give their embedded preview
/// or fail halfway. As imgproxy, a TIFF source whose URL names a camera
/// raw extension is not taken for a TIFF: it is not an image the server reads.
enum CameraRaw {
    /// imgproxy's list of raw extensions that may look like TIFF.
    static let extensions: Set<String> = [
        "3fr", "adng", "arw", "cap", "cr2", "cr3", "crw", "data", "dcr", "dng", "eip", "erf", "fff", "gpr", "iiq", "k25", "kdc",
        "mef", "moc", "mos", "mdc", "mrw", "nef", "nrw", "orf", "ori", "pef", "ppm", "proraw", "raf", "raw", "rw2", "rwl", "sr2",
        "srf", "srw", "x3f",
    ]

    /// Throws ``ImageServerError/Code/sourceNotAnImage`` for TIFF `data` from a `source` named like a camera raw file.
    static func refuse(_ data: Data, from source: URL) throws(ImageServerError) {
        guard extensions.contains(source.pathExtension.lowercased()), ImageFormat(sniffing: data) == .tiff else { return }
        throw ImageServerError(.sourceNotAnImage, "the source is a camera raw file (.\(source.pathExtension)), which is not developed")
    }
}
#endif
