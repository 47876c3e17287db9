import Foundation
import TestSupport
import Testing

/// Issue 45 point 3 in Chromium: listweb draws every accessory kind as UIKit has it
/// (Tests/Browser/accessories_test.py, with listweb_test.py's helpers). Needs Debian's chromium and
/// Playwright, as the other browser tests do; its screenshots go to .build/artifacts/listweb.
@Suite("listweb draws every accessory kind in Chromium", .serialized)
struct AccessoryBrowserTests {
    /// One cell with all eleven kinds: a checkmark shown in an unselected cell and a `hidden` one keeping
    /// its place blank, the editing controls only while the cell's state is `editing` (setState over the
    /// socket), a label's text, a tint colour, a reserved width, a menu's choice, each at its edge.
    @Test func listwebDrawsEveryAccessoryKind() throws {
        let run = try BrowserTests.runScript("accessories_test.py")
        #expect(run.status == 0 && run.output.contains("1 passed, 0 failed"), "\(run.output)")
        for screenshot in ["accessories", "accessories-editing"] {
            #expect(FileManager.default.fileExists(atPath: run.artifacts + "/\(screenshot).png"), "the screenshot \(screenshot).png")
        }
    }
}
