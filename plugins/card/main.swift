// The card plugin: the Home screen's cards from the seed. It provides the content type "card"
// (registrations use "plugin:card") and configures, from the item's payload:
//   company  {companyName, addrRoad}            → text: the name, secondaryText: the address
//   expert   {expertInfo: {expertTypeName, name}} → text: the name, secondaryText: the type
//   consult  {title, readCnt, regDate}           → text: the title, secondaryText: reads and the date
// The registration's properties may set `kind` (else it is inferred from the payload), `dateFormat`
// (yyyy, MM, dd, HH, mm; default "yyyy.MM.dd") and `utcOffsetMinutes` (default 0) for regDate.
//
//     swift run card-plugin --socket $LISTD_SOCKET
import CardFormatting
import ListPluginKit

do {
    try ListPlugin(name: "card", provides: ["card"]).run { cell in
        try PluginContent(HomeCard.content(data: cell.data, properties: cell.properties, state: cell.state))
    }
} catch {
    print("card: \(error)")
}
