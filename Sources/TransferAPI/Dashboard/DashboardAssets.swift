/// The dashboard's files (Resources/dashboard/), embedded in the binary: the page at `GET /` and
/// its scripts and style under `/dashboard/`. No build step: the files are served as written.
enum DashboardAssets {
    static let index = DashboardAsset(PackageResources.index_html, contentType: "text/html; charset=utf-8")

    /// By file name, as `/dashboard/{name}` asks for them.
    static let files: [String: DashboardAsset] = [
        "app.css": DashboardAsset(PackageResources.app_css, contentType: "text/css; charset=utf-8"),
        "app.js": DashboardAsset(PackageResources.app_js, contentType: "text/javascript; charset=utf-8"),
        "api.js": DashboardAsset(PackageResources.api_js, contentType: "text/javascript; charset=utf-8"),
        "format.js": DashboardAsset(PackageResources.format_js, contentType: "text/javascript; charset=utf-8"),
        "view.js": DashboardAsset(PackageResources.view_js, contentType: "text/javascript; charset=utf-8"),
        "states.js": DashboardAsset(PackageResources.states_js, contentType: "text/javascript; charset=utf-8"),
        "tasklist.js": DashboardAsset(PackageResources.tasklist_js, contentType: "text/javascript; charset=utf-8"),
        "overview.js": DashboardAsset(PackageResources.overview_js, contentType: "text/javascript; charset=utf-8"),
        "detail.js": DashboardAsset(PackageResources.detail_js, contentType: "text/javascript; charset=utf-8"),
        "add.js": DashboardAsset(PackageResources.add_js, contentType: "text/javascript; charset=utf-8"),
    ]
}
