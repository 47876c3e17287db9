/// The bounds on templates: what `register` accepts (checked before anything is compiled) and what
/// rendering one cell may cost. Every limit is a `limit-exceeded` `CellError` naming the template's path.
///
/// With the standard limits, compiling is linear in the template's bytes (at most 128 KiB per
/// registration) and rendering a cell does at most `maxCellRenderSteps` units of work, so neither can
/// hold the event loop for long, whatever the template or the payload.
public struct TemplateLimits: Hashable, Sendable {
    /// Sections (`{{#x}}`, `{{^x}}`) open inside one another at once.
    public var maxDepth: Int
    /// UTF-8 bytes of one template string.
    public var maxTemplateBytes: Int
    /// UTF-8 bytes of all the template strings of one registration together.
    public var maxRegistrationTemplateBytes: Int
    /// UTF-8 bytes one template string may render to.
    public var maxFieldOutputBytes: Int
    /// UTF-8 bytes all the template strings of one cell may render to together.
    public var maxCellOutputBytes: Int
    /// Units of work rendering one cell may take: one per tag or text run visited, per section pass, per
    /// context looked through (and per 64 bytes of a name looked up), and per JSON value written by a
    /// variable that names an array or an object.
    public var maxCellRenderSteps: Int
    /// Steps the cells of one request (a `dequeue` of many index paths) may take together: once they are
    /// spent, the request's further cells fail. This bounds how long one request holds the event loop.
    public var maxRequestRenderSteps: Int

    /// The limits listd uses.
    public static let standard = TemplateLimits()

    /// Limits with the given values; each defaults to the standard one.
    public init(
        maxDepth: Int = 64, maxTemplateBytes: Int = 64 * 1024, maxRegistrationTemplateBytes: Int = 128 * 1024,
        maxFieldOutputBytes: Int = 64 * 1024, maxCellOutputBytes: Int = 256 * 1024, maxCellRenderSteps: Int = 100_000,
        maxRequestRenderSteps: Int = 500_000
    ) {
        self.maxDepth = maxDepth
        self.maxTemplateBytes = maxTemplateBytes
        self.maxRegistrationTemplateBytes = maxRegistrationTemplateBytes
        self.maxFieldOutputBytes = maxFieldOutputBytes
        self.maxCellOutputBytes = maxCellOutputBytes
        self.maxCellRenderSteps = maxCellRenderSteps
        self.maxRequestRenderSteps = maxRequestRenderSteps
    }
}

/// What compiling the templates of one registration has used so far (the registration-wide size limit).
public struct CompileBudget: Sendable {
    /// The limits checked.
    public let limits: TemplateLimits
    /// Template bytes compiled so far.
    public private(set) var templateBytes = 0

    /// A budget with nothing used.
    public init(limits: TemplateLimits = .standard) {
        self.limits = limits
    }

    /// Takes `bytes` for the template at `path`, before it is compiled.
    ///
    /// - Throws: `CellError` (`limit-exceeded`) when the template, or the registration's templates
    ///   together, are over their limit.
    mutating func take(_ bytes: Int, path: String) throws(CellError) {
        if bytes > limits.maxTemplateBytes {
            throw CellError(
                .limitExceeded, "The template at \(path) is \(bytes) bytes; a template may have at most \(limits.maxTemplateBytes).")
        }
        templateBytes += bytes
        if templateBytes > limits.maxRegistrationTemplateBytes {
            throw CellError(
                .limitExceeded,
                "The templates up to \(path) are \(templateBytes) bytes; a registration's templates may have at most \(limits.maxRegistrationTemplateBytes) together.")
        }
    }
}

/// What rendering one cell has used so far: steps and output bytes, against `TemplateLimits`.
public struct RenderBudget: Sendable {
    /// The limits checked.
    public let limits: TemplateLimits
    /// Units of work done so far (see `TemplateLimits.maxCellRenderSteps`).
    public private(set) var steps = 0
    /// Bytes rendered so far, over every template of the cell.
    public private(set) var outputBytes = 0

    /// A budget with nothing used.
    public init(limits: TemplateLimits = .standard) {
        self.limits = limits
    }

    /// Takes `count` steps for the template at `path`.
    @inline(__always)
    mutating func step(_ count: Int = 1, path: String) throws(CellError) {
        steps += count
        if steps > limits.maxCellRenderSteps {
            throw CellError(
                .limitExceeded, "Rendering the template at \(path) takes more than the cell's \(limits.maxCellRenderSteps) steps.")
        }
    }

    /// Takes `count` output bytes for the template at `path`, whose output already has `fieldBytes`.
    @inline(__always)
    mutating func output(_ count: Int, fieldBytes: Int, path: String) throws(CellError) {
        try check(count, fieldBytes: fieldBytes, path: path)
        outputBytes += count
    }

    /// Throws when `count` more output bytes (after `fieldBytes` in this template) would be over a limit.
    func check(_ count: Int, fieldBytes: Int, path: String) throws(CellError) {
        if fieldBytes + count > limits.maxFieldOutputBytes {
            throw CellError(
                .limitExceeded, "The template at \(path) renders to more than \(limits.maxFieldOutputBytes) bytes.")
        }
        if outputBytes + count > limits.maxCellOutputBytes {
            throw CellError(
                .limitExceeded, "The cell's templates render to more than \(limits.maxCellOutputBytes) bytes (at \(path)).")
        }
    }
}
