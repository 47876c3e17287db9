/// How text is drawn: the SGR attributes a terminal understands.
public struct TextStyle: Hashable, Sendable {
    public var bold = false
    public var dim = false
    public var italic = false
    public var underline = false
    public var reverse = false
    /// A foreground colour as its SGR code (30–37, 90–97); `nil` is the terminal's own.
    public var foreground: UInt8?

    public init(bold: Bool = false, dim: Bool = false, italic: Bool = false, underline: Bool = false, reverse: Bool = false, foreground: UInt8? = nil) {
        self.bold = bold
        self.dim = dim
        self.italic = italic
        self.underline = underline
        self.reverse = reverse
        self.foreground = foreground
    }

    public static let plain = TextStyle()

    /// The escape sequence that selects this style (after a reset); colours only with `colors`.
    func escape(colors: Bool) -> String {
        var codes = ["0"]
        if bold { codes.append("1") }
        if dim { codes.append("2") }
        if italic { codes.append("3") }
        if underline { codes.append("4") }
        if reverse { codes.append("7") }
        if colors, let foreground { codes.append(String(foreground)) }
        return "\u{1B}[" + codes.joined(separator: ";") + "m"
    }
}

/// A screen of `width` × `height` terminal cells to draw on. Text is placed by grapheme cluster with
/// its real width (a wide character takes two cells); everything is clipped to the canvas and to an
/// optional clip rectangle.
public struct Canvas: Sendable {
    struct Cell: Hashable, Sendable {
        /// The grapheme drawn here; empty for the second half of a wide one.
        var glyph: String = " "
        var style: TextStyle = .plain
    }

    public let width: Int
    public let height: Int
    private var cells: [Cell]

    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: Cell(), count: self.width * self.height)
    }

    /// Draws `text` from column `x` of row `y`, at most `maxWidth` columns (truncated with "…"), inside
    /// `clip` columns. Returns the column after the text. Control characters in `text` (ESC, BEL, C1…)
    /// are drawn visibly (`TerminalText.visible`): nothing drawn reaches the terminal as a control.
    @discardableResult
    public mutating func draw(_ text: String, x: Int, y: Int, maxWidth: Int? = nil, style: TextStyle = .plain, clip: Range<Int>? = nil) -> Int {
        guard y >= 0 && y < height else { return x }
        let text = TerminalText.visible(text)
        let visible = clip.map { $0.clamped(to: 0..<width) } ?? 0..<width
        let shown = maxWidth.map { TerminalWidth.truncate(text, to: $0) } ?? text
        var column = x
        for character in shown {
            let glyphWidth = TerminalWidth.of(character)
            if glyphWidth == 0 {
                // A zero-width character joins the previous cell's glyph.
                if column > 0 && visible.contains(column - 1) { cells[y * width + column - 1].glyph.append(character) }
                continue
            }
            if column >= visible.lowerBound && column + glyphWidth <= visible.upperBound {
                splitWideCharacters(row: y, columns: column..<(column + glyphWidth))
                cells[y * width + column] = Cell(glyph: String(character), style: style)
                if glyphWidth == 2 { cells[y * width + column + 1] = Cell(glyph: "", style: style) }
            } else if column < visible.upperBound && column + glyphWidth > visible.lowerBound {
                // Half a wide character is cut by the clip: draw a space in the visible half.
                for half in column..<(column + glyphWidth) where visible.contains(half) {
                    splitWideCharacters(row: y, columns: half..<(half + 1))
                    cells[y * width + half] = Cell(glyph: " ", style: style)
                }
            }
            column += glyphWidth
        }
        return column
    }

    /// Before `columns` of `row` are drawn over: a wide character only half covered by them leaves a
    /// space in its other half (else the terminal would draw it whole and shift the rest of the row).
    private mutating func splitWideCharacters(row: Int, columns: Range<Int>) {
        let start = row * width
        if columns.lowerBound > 0 && columns.lowerBound < width && cells[start + columns.lowerBound].glyph.isEmpty {
            cells[start + columns.lowerBound - 1].glyph = " "
        }
        if columns.upperBound < width && cells[start + columns.upperBound].glyph.isEmpty {
            cells[start + columns.upperBound].glyph = " "
        }
    }

    /// Applies `style` to a rectangle's cells, keeping their glyphs (selection, highlight).
    public mutating func restyle(x: Int, y: Int, width span: Int, height rows: Int, _ change: (inout TextStyle) -> Void) {
        for row in max(0, y)..<min(height, y + rows) {
            for column in max(0, x)..<min(width, x + span) { change(&cells[row * width + column].style) }
        }
    }

    /// Draws a box outline with light box-drawing characters (rounded corners when `rounded`).
    public mutating func box(x: Int, y: Int, width span: Int, height rows: Int, style: TextStyle = TextStyle(dim: true), rounded: Bool = true, openTop: Bool = false, openBottom: Bool = false) {
        guard span >= 2 && rows >= 1 else { return }
        let (topLeft, topRight, bottomLeft, bottomRight) = rounded ? ("╭", "╮", "╰", "╯") : ("┌", "┐", "└", "┘")
        let horizontal = String(repeating: "─", count: span - 2)
        if !openTop { draw(topLeft + horizontal + topRight, x: x, y: y, style: style) }
        if !openBottom { draw(bottomLeft + horizontal + bottomRight, x: x, y: y + rows - 1, style: style) }
        for row in (y + (openTop ? 0 : 1))..<(y + rows - (openBottom ? 0 : 1)) {
            draw("│", x: x, y: row, style: style)
            draw("│", x: x + span - 1, y: row, style: style)
        }
    }

    /// The canvas as text lines without styles, trailing spaces removed.
    public var plainLines: [String] {
        (0..<height).map { row in
            var line = ""
            for column in 0..<width { line += cells[row * width + column].glyph }
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }

    /// The canvas as one string for a terminal: each row positioned with a cursor move, styles as SGR
    /// escapes (emitted only when they change).
    public var terminalFrame: String { terminalFrame(colors: true) }

    /// `terminalFrame`, with colours or without (`NO_COLOR`: bold, dim, italic, underline and reverse stay).
    public func terminalFrame(colors: Bool) -> String {
        var output = ""
        for row in 0..<height {
            output += "\u{1B}[\(row + 1);1H"
            var current = TextStyle.plain
            output += current.escape(colors: colors)
            for column in 0..<width {
                let cell = cells[row * width + column]
                if cell.style != current {
                    current = cell.style
                    output += current.escape(colors: colors)
                }
                output += cell.glyph
            }
            output += "\u{1B}[0m"
        }
        return output
    }
}
