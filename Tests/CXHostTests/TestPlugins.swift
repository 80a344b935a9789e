import CXHost
import EchoPlugin

enum TestPlugins {
    static func echo() -> any Plugin { EchoPlugin() }
}
