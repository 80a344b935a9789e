#if canImport(Glibc)
    import Glibc
#endif

/// glibc's allocator as the shell runs it, set through `GLIBC_TUNABLES`, which glibc reads
/// only as a process starts:
///
/// - **Huge pages** (`glibc.malloc.hugetlb=1`). A push to a device among a million touches
///   a handful of pages the last push did not (its device, its token's entry, its tray), and
///   each is a TLB miss; in a virtual machine a miss walks two page tables. Where the
///   kernel's THP setting is `madvise` (Debian's default), glibc backs its heap with 2 MB
///   pages only when this asks. Docs/Scaling.md has why.
/// - **Deeper per-thread caches** (`glibc.malloc.tcache_count=1024`, from 7). The threads
///   free and allocate in batches (32 requests a batch); past seven chunks of a size,
///   glibc's cache sends the rest through the arena's slow paths, which a push paid some 12
///   times. 1,024 deep took ~1.4k instructions off a push (Docs/Performance.md).
public enum HeapTunables {
    /// What the shell adds, each unless the caller's `GLIBC_TUNABLES` names it already.
    static let wanted = ["glibc.malloc.hugetlb=1", "glibc.malloc.tcache_count=1024"]

    /// `current` (a `GLIBC_TUNABLES` value, nil when unset) with every wanted tunable it
    /// does not name added after it; nil when it names them all (nothing to do).
    static func adding(to current: String?) -> String? {
        func name(_ tunable: Substring) -> Substring { tunable.prefix { $0 != "=" } }
        let given = (current ?? "").split(separator: ":")
        let named = Set(given.map(name))
        let missing = wanted.filter { !named.contains(name($0[...])) }
        guard !missing.isEmpty else { return nil }
        return (given.map(String.init) + missing).joined(separator: ":")
    }

    /// Starts this process again, in place (same pid, arguments and descriptors), with the
    /// wanted tunables added to `GLIBC_TUNABLES`. Returns without doing so, and the process
    /// goes on as it is, when `GLIBC_TUNABLES` names them all already (the caller chose, or
    /// this is the second start), under valgrind (whose tool an exec would leave), or when
    /// the exec fails. Call it first thing, before any thread starts.
    public static func adopt() {
        #if canImport(Glibc)
            let current = getenv("GLIBC_TUNABLES").map { String(cString: $0) }
            guard let tunables = adding(to: current) else { return }
            if let preload = getenv("LD_PRELOAD"), String(cString: preload).contains("vgpreload") { return }
            var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            guard readlink("/proc/self/exe", &path, Int(PATH_MAX)) > 0 else { return }
            setenv("GLIBC_TUNABLES", tunables, 1)
            execv(path, CommandLine.unsafeArgv)
            // Still here: the exec failed, and the environment is put back as it was.
            if let current { setenv("GLIBC_TUNABLES", current, 1) } else { unsetenv("GLIBC_TUNABLES") }
        #endif
    }
}
