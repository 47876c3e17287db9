// The emoji plugin: the seed's EmojiContentConfiguration, one large centered emoji. It provides the
// content type "emoji" (registrations use "plugin:emoji") and configures cells from the payload's `text`.
//
//     swift run emoji-plugin --socket $LISTD_SOCKET
import DiffableCore
import ListPluginKit

do {
    try ListPlugin(name: "emoji", provides: ["emoji"]).run { cell in
        let emoji = cell.data["text"]?.stringValue ?? cell.item
        return PluginContent([
            "text": .string(emoji), "font": "largeTitle", "alignment": "center",
            "selected": cell.state["selected"] ?? false,
        ])
    }
} catch {
    print("emoji: \(error)")
}
