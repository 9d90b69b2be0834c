/// The version `imago --version` prints.
public enum ImagoVersion {
    /// The release this source tree becomes; bumped when a release is tagged.
    public static let current = "0.10.0"
}
