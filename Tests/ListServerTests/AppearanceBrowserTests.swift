import Foundation
import TestSupport
import Testing

/// Issue 49 items 1 and 2 in Chromium: listweb's pages in UIKit's system look, light and dark, and usable
/// without a mouse (Tests/Browser/appearance_test.py, with listweb_test.py's helpers). Needs Debian's
/// chromium and Playwright, as the other browser tests do; its screenshots go to .build/artifacts/listweb.
@Suite("listweb looks like UIKit and works from the keyboard in Chromium", .serialized)
struct AppearanceBrowserTests {
    /// plain, grouped, insetGrouped and sidebar lists side by side; an inset grouped page all in systemGroupedBackground with its sections' first and last rows rounded
    /// and inset by the layout margins, light and dark; the styled screen's cards and its badge "12" on
    /// one line; grouped headers in footnote; the emoji plugin's largeTitle at 34 px; the index and the bar
    /// at 390 points; the outline as a tree the arrows, Enter, Right and Left work; no animation with
    /// reduced motion; the outage banner while listd is down.
    @Test func listwebLooksLikeUIKitAndWorksFromTheKeyboard() throws {
        let started = Date().addingTimeInterval(-1)
        let run = try BrowserTests.runScript("appearance_test.py")
        #expect(run.status == 0 && run.output.contains("9 passed, 0 failed"), "\(run.output)")
        for screenshot in ["appearance-outline-390-light", "appearance-outline-1280-dark", "appearance-shop-390", "appearance-outage"] {
            // Made by this run (the artifacts directory keeps earlier runs' files).
            let made = try? FileManager.default.attributesOfItem(atPath: run.artifacts + "/\(screenshot).png")[.modificationDate] as? Date
            #expect(made.map { $0 >= started } == true, "the screenshot \(screenshot).png")
        }
    }
}
