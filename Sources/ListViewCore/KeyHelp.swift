/// listview's keys: the hints at the end of its status line (all of them from 70 columns, `? keys · q
/// quit` below), and the list `?` shows over the view.
public enum KeyHelp {
    /// Every key and what it does, in the order `?` lists them.
    public static let keys: [(keys: String, action: String)] = [
        ("j k  ↓ ↑", "move down, up"),
        ("h l  ← →", "move sideways (a row that scrolls sideways)"),
        ("PgDn PgUp  ^F ^B", "page down, up"),
        ("g G  Home End", "top, bottom"),
        ("Enter  space", "select, deselect"),
        ("o", "expand, collapse an outline item"),
        ("J K", "move the item down, up (where reorderable)"),
        ("r", "re-attach: fetch everything again"),
        ("?", "show, hide these keys"),
        ("Esc", "hide these keys (Esc alone never quits)"),
        ("q", "quit (here: hide these keys)"),
    ]

    /// The hints when the status line has room: every key of the view (␣ is space), `?` and `q`.
    public static let fullHints = "j/k h/l ␣ o J/K r · ? keys · q quit"
    /// The hints on a narrower line.
    public static let shortHints = "? keys · q quit"
    /// The narrowest status line that shows `fullHints`.
    public static let fullHintsWidth = 70

    /// What the status line says when Esc is pressed over the view.
    public static let escapeMessage = "Esc does not quit: q quits, ? shows the keys"

    /// The hints for a status line `width` columns wide.
    public static func hints(forWidth width: Int) -> String {
        width >= fullHintsWidth ? fullHints : width >= 36 ? shortHints : "? keys"
    }

    /// A status line of `width` columns: ` info` (cut with "…" where it does not fit) and the hints
    /// flush right, so that they are never cut; the short ones when `brief` (a message is shown: it has
    /// the room).
    public static func statusLine(_ info: String, width: Int, brief: Bool = false) -> String {
        let hints = brief ? hints(forWidth: min(width, fullHintsWidth - 1)) : hints(forWidth: width)
        let hintsWidth = TerminalWidth.of(hints) + 1  // and a space after them
        let room = width - hintsWidth - 2  // a space before the info, at least one before the hints
        guard room >= 4 else { return TerminalWidth.truncate(" " + info, to: width) }
        let shown = " " + TerminalWidth.truncate(info, to: room)
        let gap = width - TerminalWidth.of(shown) - hintsWidth
        return shown + String(repeating: " ", count: max(1, gap)) + hints + " "
    }

    /// Draws the list of keys in a box over the top of the view's `rows` rows (the status line below stays),
    /// then `message` in full (the status line may have cut it), wrapped.
    public static func drawOverlay(on canvas: inout Canvas, rows: Int, message: String?) {
        let keyColumn = keys.map { TerminalWidth.of($0.keys) }.max() ?? 0
        let natural = keys.map { keyColumn + 2 + TerminalWidth.of($0.action) }.max() ?? 0
        let inner = max(1, min(natural, canvas.width - 4))
        var lines: [(keys: String, text: String)] = keys.map { ($0.keys, $0.action) }
        if let message, !message.isEmpty {
            lines.append(("", ""))
            for line in wrap(message, width: inner) { lines.append(("", line)) }
        }
        let boxWidth = min(canvas.width, inner + 4)
        let boxHeight = min(rows, lines.count + 2)
        guard boxWidth >= 4 && boxHeight >= 3 else { return }
        let x = (canvas.width - boxWidth) / 2
        let blank = String(repeating: " ", count: boxWidth)
        for row in 0..<boxHeight { canvas.draw(blank, x: x, y: row) }
        canvas.box(x: x, y: 0, width: boxWidth, height: boxHeight, style: TextStyle(bold: true))
        canvas.draw(" listview keys ", x: x + 2, y: 0, maxWidth: boxWidth - 4, style: TextStyle(bold: true))
        for (index, line) in lines.prefix(boxHeight - 2).enumerated() {
            let y = index + 1
            if line.keys.isEmpty {
                canvas.draw(line.text, x: x + 2, y: y, maxWidth: inner)
            } else {
                canvas.draw(line.keys, x: x + 2, y: y, maxWidth: inner, style: TextStyle(bold: true))
                if inner > keyColumn + 2 { canvas.draw(line.text, x: x + 2 + keyColumn + 2, y: y, maxWidth: inner - keyColumn - 2) }
            }
        }
    }

    /// `text` in lines of at most `width` columns, broken at spaces where it can be.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            var word = String(word)
            let candidate = line.isEmpty ? word : line + " " + word
            if TerminalWidth.of(candidate) <= width {
                line = candidate
                continue
            }
            if !line.isEmpty { lines.append(line) }
            // A word longer than the line is cut into pieces.
            while TerminalWidth.of(word) > width {
                var piece = ""
                while let first = word.first, TerminalWidth.of(piece) + TerminalWidth.of(first) <= width {
                    piece.append(first)
                    word.removeFirst()
                }
                if piece.isEmpty { break }
                lines.append(piece)
            }
            line = word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
