/// The running ``SharedWork`` by key: a caller asking for a key joins its work, or starts it.
/// The lock guards only the table; works of different value types may share one pool.
final class SharedWorkPool<Key: Hashable & Sendable>: Sendable {
    private let works = Locked<[Key: any Sendable]>([:])

    init() {}

    /// Joins the running work for `key`, or starts `work` as a new one.
    func subscribe<Value: Sendable>(key: Key, priority: LoadPriority,
                                    work: @escaping @Sendable (SharedWork<Value>) async throws -> Value) -> SharedWorkSubscription<Value> {
        subscribe(key: key, priority: priority, prepare: { _ in work })
    }

    /// Joins the running work for `key`, or makes a new one: `prepare` runs at once, before this
    /// returns, and gives the body the work's task runs.
    ///
    /// Work that depends on other shared work joins it in `prepare`, not in its body: a caller
    /// that has subscribed then shares everything its work depends on that is running at that
    /// moment. Joined later, from the task, an upstream that ended in between would run again.
    func subscribe<Value: Sendable>(key: Key, priority: LoadPriority,
                                    prepare: (SharedWork<Value>) -> @Sendable (SharedWork<Value>) async throws -> Value) -> SharedWorkSubscription<Value> {
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
            if isNew { shared.start(prepare(shared)) }
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
