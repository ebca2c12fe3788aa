/// The running ``SharedWork`` by key: a caller asking for a key joins its work, or starts it.
/// The lock guards only the table; works of different value types may share one pool.
final class SharedWorkPool<Key: Hashable & Sendable>: Sendable {
    private let works = Locked<[Key: any Sendable]>([:])

    init() {}

    /// Joins the running work for `key`, or starts `work` as a new one.
    func subscribe<Value: Sendable>(key: Key, priority: LoadPriority,
                                    work: @escaping @Sendable (SharedWork<Value>) async throws -> Value) -> SharedWorkSubscription<Value> {
        while true {
            let (shared, isNew) = works.withLock { table -> (SharedWork<Value>, Bool) in
                if let running = table[key] as? SharedWork<Value> { return (running, false) }
                let shared = SharedWork<Value>(priority: priority) { [weak self] ended in
                    self?.remove(key, ended)
                }
                table[key] = shared
                return (shared, true)
            }
            // Work found in the table may end between the lookup and the join: look again.
            guard let subscription = shared.join(priority: priority) else {
                remove(key, shared)
                continue
            }
            if isNew { shared.start(work) }
            return subscription
        }
    }

    /// How many works are running.
    var count: Int { works.withLock { $0.count } }

    private func remove<Value>(_ key: Key, _ shared: SharedWork<Value>) {
        works.withLock { table in
            if let current = table[key] as? SharedWork<Value>, current === shared { table[key] = nil }
        }
    }
}
