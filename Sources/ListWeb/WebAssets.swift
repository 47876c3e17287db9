/// The page's files (Web/), embedded in the binary at build time: nothing to install beside it, nothing
/// fetched from elsewhere.
enum WebAssets {
    struct Asset {
        let bytes: [UInt8]
        let contentType: String
    }

    /// The file served at `/static/NAME` (and the two pages), or nil.
    static func named(_ name: String) -> Asset? {
        switch name {
        case "index.html": return Asset(bytes: PackageResources.index_html, contentType: "text/html; charset=utf-8")
        case "source.html": return Asset(bytes: PackageResources.source_html, contentType: "text/html; charset=utf-8")
        case "style.css": return Asset(bytes: PackageResources.style_css, contentType: "text/css; charset=utf-8")
        case "index.js": return Asset(bytes: PackageResources.index_js, contentType: "text/javascript; charset=utf-8")
        case "source.js": return Asset(bytes: PackageResources.source_js, contentType: "text/javascript; charset=utf-8")
        case "view.js": return Asset(bytes: PackageResources.view_js, contentType: "text/javascript; charset=utf-8")
        case "model.js": return Asset(bytes: PackageResources.model_js, contentType: "text/javascript; charset=utf-8")
        case "layout.js": return Asset(bytes: PackageResources.layout_js, contentType: "text/javascript; charset=utf-8")
        case "cells.js": return Asset(bytes: PackageResources.cells_js, contentType: "text/javascript; charset=utf-8")
        case "socket.js": return Asset(bytes: PackageResources.socket_js, contentType: "text/javascript; charset=utf-8")
        case "access.js": return Asset(bytes: PackageResources.access_js, contentType: "text/javascript; charset=utf-8")
        default: return nil
        }
    }
}
