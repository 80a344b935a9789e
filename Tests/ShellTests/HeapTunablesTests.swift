import Testing

@testable import ShellKit

/// What `GLIBC_TUNABLES` the shell starts itself again with: its own tunables added after
/// the caller's, none of the caller's changed, and no second start once all are named.
@Suite struct HeapTunablesTests {
    @Test func theWantedTunablesAreAddedAfterTheCallersAndOnlyWhenMissing() {
        let ours = "glibc.malloc.hugetlb=1:glibc.malloc.tcache_count=1024"
        #expect(HeapTunables.adding(to: nil) == ours)
        #expect(HeapTunables.adding(to: "") == ours)
        #expect(HeapTunables.adding(to: "glibc.malloc.arena_max=2") == "glibc.malloc.arena_max=2:" + ours)
        #expect(
            HeapTunables.adding(to: "glibc.malloc.tcache_count=0")
                == "glibc.malloc.tcache_count=0:glibc.malloc.hugetlb=1")
        #expect(
            HeapTunables.adding(to: "glibc.malloc.hugetlb=0")
                == "glibc.malloc.hugetlb=0:glibc.malloc.tcache_count=1024")
        // The second start, and a caller who named both: nothing to do.
        #expect(HeapTunables.adding(to: ours) == nil)
        #expect(HeapTunables.adding(to: "glibc.malloc.tcache_count=7:glibc.malloc.hugetlb=0") == nil)
        // A name is matched whole, not as a prefix of another.
        #expect(
            HeapTunables.adding(to: "glibc.malloc.hugetlbx=1:glibc.malloc.tcache_count=1024")
                == "glibc.malloc.hugetlbx=1:glibc.malloc.tcache_count=1024:glibc.malloc.hugetlb=1")
    }
}
