/// The running ``SharedWork`` by key: a caller asking for a key joins its work, or starts it.
/// The lock guards only the table; works of different value types may share one pool.
package final class SharedWorkPool<Key: Hashable & Sendable>: Sendable {
    private let works = Locked<[Key: any Sendable]>([:])

    package init() {}

    /// Joins the running work for `key`, or starts `work` as a new one.
    package func subscribe<Value: Sendable>(key: Key, priority: LoadPriority,
                                    work: @escaping @Sendable (SharedWork<Value>) async throws -> Value) -> SharedWorkSubscription<Value> {
        subscribe(key: key, priority: priority, prepare: { _ in work })
    }

    /// Joins the running work for `key`, or makes a new one: `prepare` runs at once, before this
    /// returns, and gives the body the work's task runs.
    ///
    /// Work that depends on other shared work joins it in `prepare`, not in its body: a caller
    /// that has subscribed then shares everything its work depends on that is running at that
    /// moment. Joined later, from the task, an upstream that ended in between would run again.
    package func subscribe<Value: Sendable>(key: Key, priority: LoadPriority,
                                    prepare: (SharedWork<Value>) -> @Sendable (SharedWork<Value>) async throws -> Value) -> SharedWorkSubscription<Value> {
        let (subscription, _) = enter(key: key, priority: priority,
                                      join: { (shared: SharedWork<Value>) in shared.join(priority: priority) },
                                      start: { (shared: SharedWork<Value>) in shared.start(prepare(shared)) })
        return subscription
    }

    /// Joins the running work for `key` with a callback sink, or makes a new one, which `start`
    /// sets running (the work then ends itself with ``SharedWork/finish(_:)``). `start` runs at
    /// once, before this returns; `isNew` tells whether it ran.
    func join<Value: Sendable>(key: Key, priority: LoadPriority, sink: SharedWorkSink<Value>,
                               start: (SharedWork<Value>) -> Void) -> (waiter: SharedWorkWaiter<Value>, isNew: Bool) {
        let (waiter, isNew) = enter(key: key, priority: priority, join: { $0.join(priority: priority, sink: sink) }, start: start)
        return (waiter, isNew)
    }

    /// Joins the running work for `key` with an event stream of its own, or makes a new one,
    /// which `start` sets running (the work then ends itself with ``SharedWork/finish(_:)``).
    /// `accepts` screens responses for this waiter alone; `isNew` tells whether `start` ran.
    func subscribe<Value: Sendable>(key: Key, priority: LoadPriority, accepts: (@Sendable (ImageLoadResponse) -> Bool)?,
                                    start: (SharedWork<Value>) -> Void) -> (subscription: SharedWorkSubscription<Value>, isNew: Bool) {
        let (subscription, isNew) = enter(key: key, priority: priority,
                                          join: { $0.join(priority: priority, accepts: accepts) }, start: start)
        return (subscription, isNew)
    }

    /// How many works are running.
    package var count: Int { works.withLock { $0.count } }

    /// How many callers wait for the running work of `key` (0 when none runs): for tests that
    /// must know every caller joined before the work goes on.
    package func waiterCount<Value: Sendable>(key: Key, of _: Value.Type) -> Int {
        (works.withLock { $0[key] } as? SharedWork<Value>)?.waiterCount ?? 0
    }

    private func enter<Value: Sendable, Joined>(key: Key, priority: LoadPriority, join: (SharedWork<Value>) -> Joined?,
                                                start: (SharedWork<Value>) -> Void) -> (joined: Joined, isNew: Bool) {
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
            guard let joined = join(shared) else {
                remove(key, shared)
                continue
            }
            if isNew { start(shared) }
            return (joined, isNew)
        }
    }

    private func remove<Value>(_ key: Key, _ shared: SharedWork<Value>) {
        works.withLock { table in
            if let current = table[key] as? SharedWork<Value>, current === shared { table[key] = nil }
        }
    }
}
