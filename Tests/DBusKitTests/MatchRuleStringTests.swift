import Testing
@testable import DBusKit

/// The AddMatch rule string (D-Bus specification, "Match Rules").
@Suite struct MatchRuleStringTests {
    @Test func everyKeyInOrderAndQuotesEscaped() {
        let rule = MatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                             path: nil, pathNamespace: ObjectPath("/org/bluez"), arg0: "it's")
        #expect(rule.description == "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path_namespace='/org/bluez',arg0='it'\\''s'")
        #expect(MatchRule().description == "type='signal'")
        // Quotes beside multi-byte characters (the escape works on UTF-8 bytes).
        #expect(MatchRule(arg0: "é'ü''").description == "type='signal',arg0='é'\\''ü'\\'''\\'''")
        #expect(MatchRule(path: ObjectPath("/a")).description == "type='signal',path='/a'")
    }
}
