import COpenSSL

/// An OpenSSL client whose records pass through memory, so that a test reads and writes
/// the socket itself: it trusts `ca` alone, offers one ALPN protocol, and counts the
/// records it receives (each by its header, as its bytes arrive).
final class TLSTestClient {
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer
    private(set) var recordsReceived = 0
    /// Bytes of the record being received that have not arrived yet, and of its header.
    private var recordLeft = 0
    private var recordHeader: [UInt8] = []

    init?(ca: String, serverName: String, alpn protocolName: String) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { return nil }
        self.context = context
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        let alpn = [UInt8(protocolName.utf8.count)] + Array(protocolName.utf8)
        guard SSL_CTX_load_verify_locations(context, ca, nil) == 1,
            SSL_CTX_set_alpn_protos(context, alpn, UInt32(alpn.count)) == 0, let ssl = SSL_new(context),
            let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem())
        else {
            SSL_CTX_free(context)
            return nil
        }
        (self.ssl, self.input, self.output) = (ssl, input, output)
        SSL_set_bio(ssl, input, output)
        _ = serverName.withCString {
            SSL_ctrl(
                ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name), UnsafeMutableRawPointer(mutating: $0)
            )
        }
        SSL_set_connect_state(ssl)
    }

    deinit {
        SSL_free(ssl)  // and its BIOs
        SSL_CTX_free(context)
    }

    var connected: Bool { SSL_is_init_finished(ssl) == 1 }

    /// Records TLS has sealed for the socket: the handshake's while it lasts, and `plain`'s.
    func seal(_ plain: UnsafeBufferPointer<UInt8>? = nil) -> [UInt8] {
        if let plain {
            _ = SSL_write(ssl, plain.baseAddress, Int32(plain.count))
        } else if !connected {
            _ = SSL_do_handshake(ssl)
        }
        var sealed: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = BIO_read(output, &chunk, Int32(chunk.count))
            guard count > 0 else { return sealed }
            sealed += chunk[..<Int(count)]
        }
    }

    /// Takes bytes from the socket; returns the plaintext they opened.
    func open(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        countRecords(bytes)
        _ = BIO_write(input, bytes.baseAddress, Int32(bytes.count))
        if !connected { _ = SSL_do_handshake(ssl) }
        var plain: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while connected {
            let count = SSL_read(ssl, &chunk, Int32(chunk.count))
            guard count > 0 else { break }
            plain += chunk[..<Int(count)]
        }
        ERR_clear_error()
        return plain
    }

    /// Counts the records whose headers (five bytes: type, version, length) `bytes` hold.
    private func countRecords(_ bytes: UnsafeBufferPointer<UInt8>) {
        var at = 0
        while at < bytes.count {
            if recordLeft > 0 {
                let taken = min(recordLeft, bytes.count - at)
                recordLeft -= taken
                at += taken
                continue
            }
            recordHeader.append(bytes[at])
            at += 1
            if recordHeader.count == 5 {
                recordsReceived += 1
                recordLeft = Int(recordHeader[3]) << 8 | Int(recordHeader[4])
                recordHeader = []
            }
        }
    }
}
