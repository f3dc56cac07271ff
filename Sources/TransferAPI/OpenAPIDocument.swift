public import FoundationEssentials

/// The top-level openapi.yaml, embedded at build time (Resources/openapi.yaml links to it), so
/// the daemon serves exactly the contract it was built with.
public enum OpenAPIDocument {
    public static let data = Data(PackageResources.openapi_yaml)
}
