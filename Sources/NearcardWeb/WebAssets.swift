/// The web app's page, script, style and icon: real files under Assets/ (index.html, app.js, app.css,
/// icon.svg), embedded in the binary when it is built (SwiftPM's `embedInCode`), served from memory: no
/// CDN, no build step, nothing read from disk at run time. Card fields are only ever put on the page as
/// text (`textContent`), never as HTML; `make lint` checks app.js with ESLint.
enum WebAssets {
    static let index = String(decoding: PackageResources.index_html, as: UTF8.self)
    static let script = String(decoding: PackageResources.app_js, as: UTF8.self)
    static let style = String(decoding: PackageResources.app_css, as: UTF8.self)
    static let icon = String(decoding: PackageResources.icon_svg, as: UTF8.self)
}
