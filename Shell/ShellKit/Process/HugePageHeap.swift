#if canImport(Glibc)
    import Glibc
#endif

/// glibc's allocator on transparent huge pages, for a process that holds a large world.
///
/// A push to a device among a million touches a handful of pages the last push did not
/// (its device, its token's entry, its tray), and each is a TLB miss; in a virtual
/// machine a miss walks two page tables. Where the kernel's THP setting is `madvise`
/// (Debian's default), glibc backs its heap with 2 MB pages only when its
/// `glibc.malloc.hugetlb=1` tunable asks, and it reads tunables only as a process starts.
/// Docs/Scaling.md has why.
public enum HugePageHeap {
    private static let tunable = "glibc.malloc.hugetlb"

    /// Starts this process again, in place (same pid, arguments and descriptors), with
    /// `glibc.malloc.hugetlb=1` added to `GLIBC_TUNABLES`. Returns without doing so, and
    /// the process goes on as it is, when `GLIBC_TUNABLES` already names the tunable (the
    /// caller chose, or this is the second start), under valgrind (whose tool an exec
    /// would leave), or when the exec fails. Call it first thing, before any thread starts.
    public static func adopt() {
        #if canImport(Glibc)
            let current = getenv("GLIBC_TUNABLES").map { String(cString: $0) }
            guard !(current ?? "").contains(tunable) else { return }
            if let preload = getenv("LD_PRELOAD"), String(cString: preload).contains("vgpreload") { return }
            var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            guard readlink("/proc/self/exe", &path, Int(PATH_MAX)) > 0 else { return }
            setenv("GLIBC_TUNABLES", (current.map { $0 + ":" } ?? "") + tunable + "=1", 1)
            execv(path, CommandLine.unsafeArgv)
            // Still here: the exec failed, and the environment is put back as it was.
            if let current { setenv("GLIBC_TUNABLES", current, 1) } else { unsetenv("GLIBC_TUNABLES") }
        #endif
    }
}
