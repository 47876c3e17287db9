/// The keys under which a view tracks what it displays: an item's identifier, or a supplementary
/// view's key made here (they never clash).

/// The key under which a view tracks the supplementary view of a section (never clashes with an item id).
func supplementaryKey(_ elementKind: String, section: String, index: Int) -> String {
    "\u{1}\(elementKind)\u{1}\(section)\u{1}\(index)"
}

/// The key under which a view tracks a supplementary view anchored to an item (a badge).
func itemSupplementaryKey(_ elementKind: String, item: String) -> String {
    "\u{2}\(elementKind)\u{2}\(item)"
}

/// Whether a view's cell key is a supplementary view's (a section's or an item's), not an item's.
func isSupplementaryKey(_ key: String) -> Bool {
    key.hasPrefix("\u{1}") || key.hasPrefix("\u{2}")
}

/// The kind and item of an item-anchored supplementary view's key.
func anchoredSupplementary(ofKey key: String) -> (elementKind: String, item: String)? {
    guard key.hasPrefix("\u{2}") else { return nil }
    let parts = key.split(separator: "\u{2}", maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count == 3 else { return nil }
    return (String(parts[1]), String(parts[2]))
}
