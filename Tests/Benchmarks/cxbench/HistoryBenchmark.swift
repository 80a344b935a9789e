import Foundation
import HTTPMessage
import MQTTClient
import ShellKit

/// A request's cost must not grow with what the world remembers: Appwrite's createPush in
/// a project that has sent 12,000 messages against one that has sent none, in chunks
/// that alternate between the two (the history one once copied every message per push).
enum HistoryBenchmark {
    static func run() {
        guard let broker = try? MQTTBroker() else {
            return report("history_create_push", [], target: "skipped", met: false, note: "mosquitto is missing")
        }
        let session = Session()
        for project in ["fresh", "old"] {
            _ = session.handle(
                #"{"op":"appwrite_project","project":"\#(project)","key":"k","endpoint":"\#(broker.endpoint)"}"#)
            _ = call(session, project, "/users", #"{"userId":"u1"}"#)
        }
        let history = max(12_000 / scale, 1)
        for number in 0..<history { _ = push(session, "old", number) }
        let chunk = max(250 / scale, 1)
        var seconds = (fresh: 0.0, old: 0.0)
        var sent = (fresh: 0, old: history)
        for _ in 0..<8 {
            var start = ContinuousClock.now
            for _ in 0..<chunk {
                _ = push(session, "fresh", sent.fresh)
                sent.fresh += 1
            }
            seconds.fresh += (ContinuousClock.now - start).seconds
            start = ContinuousClock.now
            for _ in 0..<chunk {
                _ = push(session, "old", sent.old)
                sent.old += 1
            }
            seconds.old += (ContinuousClock.now - start).seconds
        }
        let ratio = seconds.fresh / max(seconds.old, 1e-9)
        report(
            "history_create_push",
            [
                ("history_messages", Double(history)), ("pushes_each", Double(8 * chunk)),
                ("pushes_per_second_fresh", Double(8 * chunk) / seconds.fresh),
                ("pushes_per_second_with_history", Double(8 * chunk) / seconds.old), ("history_vs_fresh", ratio),
            ], target: "history_vs_fresh >= 0.8", met: ratio >= 0.8)
        broker.close()
    }

    static func push(_ session: Session, _ project: String, _ number: Int) -> Int {
        call(
            session, project, "/messaging/messages/push",
            #"{"messageId":"m\#(number)","title":"t","users":["u1"],"draft":true}"#)
    }

    static func call(_ session: Session, _ project: String, _ path: String, _ body: String) -> Int {
        let request = HTTPRequest(
            headers: [
                (":method", "POST"), (":path", "/v1" + path), (":authority", "cloud.appwrite.io"),
                ("x-appwrite-project", project), ("x-appwrite-key", "k"), ("content-type", "application/json"),
            ], body: Array(body.utf8), serverName: "cloud.appwrite.io", tls: true, http2: true)
        return session.handle(network: request).response.status
    }
}
