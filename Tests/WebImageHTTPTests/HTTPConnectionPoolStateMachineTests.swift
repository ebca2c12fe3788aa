import Foundation
import NIOCore
import Testing
@testable import WebImageHTTP

/// The pool's bookkeeping driven without sockets: each test feeds ``HTTPConnectionPoolStateMachine``
/// events with made-up connection ids and checks the actions it returns, one transition at a time.
@Suite("HTTP connection pool state machine")
struct HTTPConnectionPoolStateMachineTests {
    typealias Machine = HTTPConnectionPoolStateMachine
    typealias Action = Machine.Action
    typealias Waiter = Machine.Waiter

    /// Plain http: HTTP/1.1 (no h2c unless asked for).
    static let plain = HTTPOrigin(URL(string: "http://a.test/")!)
    /// https under `.auto`: expected to speak HTTP/2 until a connection says otherwise.
    static let secure = HTTPOrigin(URL(string: "https://b.test/")!)
    static let idleTimeout = TimeAmount.seconds(60)
    let now = NIODeadline.uptimeNanoseconds(1_000_000_000)

    static func machine(limit: Int = 6) -> Machine {
        Machine(maxConnectionsPerOrigin: limit, idleTimeout: idleTimeout, httpVersion: .auto)
    }

    static func c(_ value: Int) -> Machine.ConnectionID { Machine.ConnectionID(value) }

    /// A lease for `origin`; its waiter and the actions.
    static func lease(_ machine: inout Machine, _ origin: HTTPOrigin = plain, priority: Int = 0,
                      isOpen: (Machine.ConnectionID) -> Bool = { _ in true }) -> (Waiter, [Action]) {
        let (id, actions) = machine.requestLease(origin: origin, priority: priority, connectTimeout: .seconds(5), isOpen: isOpen)
        return (Waiter(id: id, origin: origin, priority: priority, connectTimeout: .seconds(5)), actions)
    }

    /// A lease on `plain` that opens HTTP/1.1 connection `id` and is handed it.
    func leaseNewHTTP1(_ machine: inout Machine, _ id: Int) -> Waiter {
        let (waiter, actions) = Self.lease(&machine)
        #expect(actions == [.connect(waiter)])
        #expect(machine.http1Established(Self.c(id), origin: Self.plain, for: waiter.id, now: now)
            == [.executeOnHTTP1(waiter, Self.c(id), reused: false)])
        return waiter
    }

    // MARK: HTTP/1.1

    @Test func aFirstLeaseOpensAConnectionAndIsHandedIt() {
        var machine = Self.machine()
        let (waiter, actions) = Self.lease(&machine)
        #expect(actions == [.connect(waiter)])
        #expect(machine.isWaiting(waiter.id))
        #expect(machine.http1Established(Self.c(1), origin: Self.plain, for: waiter.id, now: now)
            == [.executeOnHTTP1(waiter, Self.c(1), reused: false)])
        #expect(!machine.isWaiting(waiter.id))
        #expect(machine.origins[Self.plain]?.open == 1)
    }

    @Test func atTheLimitALeaseWaitsThenGetsTheReturnedConnection() {
        var machine = Self.machine(limit: 1)
        _ = leaseNewHTTP1(&machine, 1)
        let (second, actions) = Self.lease(&machine)
        #expect(actions.isEmpty)
        #expect(machine.isWaiting(second.id))
        #expect(machine.released(Self.c(1), reusable: true, now: now) == [.executeOnHTTP1(second, Self.c(1), reused: true)])
        #expect(!machine.isWaiting(second.id))
    }

    @Test func belowTheLimitEachLeaseOpensItsOwnConnection() {
        var machine = Self.machine(limit: 2)
        _ = leaseNewHTTP1(&machine, 1)
        _ = leaseNewHTTP1(&machine, 2)
        let (third, actions) = Self.lease(&machine)
        #expect(actions.isEmpty && machine.isWaiting(third.id))
    }

    @Test func anIdleConnectionIsReusedWithOneIdleTimer() {
        var machine = Self.machine()
        _ = leaseNewHTTP1(&machine, 1)
        #expect(machine.released(Self.c(1), reusable: true, now: now) == [.scheduleIdleTimer(Self.c(1), at: now + Self.idleTimeout)])
        let (next, actions) = Self.lease(&machine)
        #expect(actions == [.executeOnHTTP1(next, Self.c(1), reused: true)])
        // Its timer is still pending: the second idle spell schedules none.
        #expect(machine.released(Self.c(1), reusable: true, now: now + .seconds(1)).isEmpty)
    }

    @Test func theMostRecentlyReleasedIdleConnectionIsReusedFirst() {
        var machine = Self.machine()
        _ = leaseNewHTTP1(&machine, 1)
        _ = leaseNewHTTP1(&machine, 2)
        _ = machine.released(Self.c(1), reusable: true, now: now)
        _ = machine.released(Self.c(2), reusable: true, now: now)
        let (next, actions) = Self.lease(&machine)
        #expect(actions == [.executeOnHTTP1(next, Self.c(2), reused: true)])
    }

    @Test func aDeadIdleConnectionIsClosedNotHandedOut() {
        var machine = Self.machine(limit: 1)
        _ = leaseNewHTTP1(&machine, 1)
        _ = machine.released(Self.c(1), reusable: true, now: now)
        let (next, actions) = Self.lease(&machine) { _ in false }
        // Its slot is free again: the lease opens a connection of its own.
        #expect(actions == [.closeConnection(Self.c(1)), .connect(next)])
    }

    @Test func anUnreusableConnectionIsClosedAndItsSlotPassesToAWaiter() {
        var machine = Self.machine(limit: 1)
        _ = leaseNewHTTP1(&machine, 1)
        let (waiting, _) = Self.lease(&machine)
        #expect(machine.released(Self.c(1), reusable: false, now: now) == [.closeConnection(Self.c(1)), .connect(waiting)])
        #expect(machine.isWaiting(waiting.id))
        #expect(machine.origins[Self.plain]?.open == 1)
    }

    @Test func anUnreusableConnectionWithNoWaiterFreesItsSlot() {
        var machine = Self.machine(limit: 1)
        _ = leaseNewHTTP1(&machine, 1)
        #expect(machine.released(Self.c(1), reusable: false, now: now) == [.closeConnection(Self.c(1))])
        #expect(machine.origins[Self.plain]?.open == 0)
        let (next, actions) = Self.lease(&machine)
        #expect(actions == [.connect(next)])
    }

    @Test func aConnectionOpenedForAWithdrawnLeaseServesTheNextOrGoesIdle() {
        var machine = Self.machine(limit: 1)
        let (first, _) = Self.lease(&machine)
        let (second, _) = Self.lease(&machine)
        #expect(machine.cancelWaiter(first.id, reason: .timedOut) == [.failWaiter(first, .timedOut)])
        #expect(machine.http1Established(Self.c(1), origin: Self.plain, for: first.id, now: now)
            == [.executeOnHTTP1(second, Self.c(1), reused: true)])
        _ = machine.released(Self.c(1), reusable: true, now: now)
        let (third, _) = Self.lease(&machine)
        #expect(machine.cancelWaiter(third.id, reason: .cancelled).isEmpty, "it was handed the idle connection already")
    }

    @Test func waitersAreServedFirstComeFirstServedWhateverTheirPriority() {
        var machine = Self.machine(limit: 1)
        _ = leaseNewHTTP1(&machine, 1)
        let (low, _) = Self.lease(&machine, priority: -2)
        let (high, _) = Self.lease(&machine, priority: 2)
        #expect(machine.released(Self.c(1), reusable: true, now: now) == [.executeOnHTTP1(low, Self.c(1), reused: true)])
        #expect(machine.released(Self.c(1), reusable: true, now: now) == [.executeOnHTTP1(high, Self.c(1), reused: true)])
    }

    // MARK: Connect failures

    @Test func aFailedConnectFailsItsLeaseAndPassesTheSlotOn() {
        var machine = Self.machine(limit: 1)
        let (first, _) = Self.lease(&machine)
        let (second, waiting) = Self.lease(&machine)
        #expect(waiting.isEmpty)
        #expect(machine.connectFailed(origin: Self.plain, for: first.id) == [.failWaiter(first, .connectFailed), .connect(second)])
        #expect(machine.connectFailed(origin: Self.plain, for: second.id) == [.failWaiter(second, .connectFailed)])
        #expect(machine.origins[Self.plain]?.open == 0 && machine.origins[Self.plain]?.connecting == 0)
    }

    @Test func anAbandonedConnectPassesTheSlotOn() {
        var machine = Self.machine(limit: 1)
        let (first, _) = Self.lease(&machine)
        let (second, _) = Self.lease(&machine)
        _ = machine.cancelWaiter(first.id, reason: .cancelled)
        #expect(machine.connectAbandoned(origin: Self.plain) == [.connect(second)])
    }

    // MARK: Idle expiry

    @Test func anIdleConnectionClosesOnceIdleForTheWholeTimeout() {
        var machine = Self.machine(limit: 1)
        _ = leaseNewHTTP1(&machine, 1)
        _ = machine.released(Self.c(1), reusable: true, now: now)
        // Reused and released again later: the first timer finds it idle for less than the timeout.
        let (again, _) = Self.lease(&machine)
        #expect(machine.isWaiting(again.id) == false)
        let later = now + .seconds(30)
        _ = machine.released(Self.c(1), reusable: true, now: later)
        #expect(machine.idleTimerFired(Self.c(1), now: now + Self.idleTimeout)
            == [.scheduleIdleTimer(Self.c(1), at: later + Self.idleTimeout)])
        #expect(machine.idleTimerFired(Self.c(1), now: later + Self.idleTimeout) == [.closeConnection(Self.c(1))])
        #expect(machine.origins[Self.plain]?.open == 0)
        let (next, actions) = Self.lease(&machine)
        #expect(actions == [.connect(next)])
        #expect(machine.idleTimerFired(Self.c(1), now: later + Self.idleTimeout * 2).isEmpty, "a stale timer does nothing")
    }

    @Test func anIdleTimerFindingTheConnectionInUseLooksAgainLater() {
        var machine = Self.machine()
        _ = leaseNewHTTP1(&machine, 1)
        _ = machine.released(Self.c(1), reusable: true, now: now)
        _ = Self.lease(&machine)
        let fired = now + Self.idleTimeout
        #expect(machine.idleTimerFired(Self.c(1), now: fired) == [.scheduleIdleTimer(Self.c(1), at: fired + Self.idleTimeout)])
    }

    @Test func anIdleConnectionTheServerClosedIsDropped() {
        var machine = Self.machine(limit: 1)
        _ = leaseNewHTTP1(&machine, 1)
        _ = machine.released(Self.c(1), reusable: true, now: now)
        #expect(machine.connectionClosed(Self.c(1)) == [.closeConnection(Self.c(1))])
        let (next, actions) = Self.lease(&machine)
        #expect(actions == [.connect(next)])
    }

    @Test func aConnectionClosingInUseIsLeftToItsRelease() {
        var machine = Self.machine(limit: 1)
        _ = leaseNewHTTP1(&machine, 1)
        #expect(machine.connectionClosed(Self.c(1)).isEmpty)
        #expect(machine.released(Self.c(1), reusable: false, now: now) == [.closeConnection(Self.c(1))])
    }

    // MARK: Cancellation and shutdown

    @Test func aCancelledWaiterLeavesTheQueue() {
        var machine = Self.machine(limit: 1)
        _ = leaseNewHTTP1(&machine, 1)
        let (waiting, _) = Self.lease(&machine)
        #expect(machine.cancelWaiter(waiting.id, reason: .cancelled) == [.failWaiter(waiting, .cancelled)])
        #expect(machine.cancelWaiter(waiting.id, reason: .cancelled).isEmpty, "a lease is decided once")
        #expect(machine.origins[Self.plain]?.queue.isEmpty == true)
        #expect(machine.released(Self.c(1), reusable: true, now: now) == [.scheduleIdleTimer(Self.c(1), at: now + Self.idleTimeout)])
    }

    @Test func shutdownFailsWaitersAndClosesEveryConnection() {
        var machine = Self.machine(limit: 2)
        _ = leaseNewHTTP1(&machine, 1)
        _ = leaseNewHTTP1(&machine, 2)
        _ = machine.released(Self.c(2), reusable: true, now: now)
        _ = Self.lease(&machine, priority: 0, isOpen: { _ in true })
        let (waiting, _) = Self.lease(&machine)
        let (connecting, _) = Self.lease(&machine, Self.secure)
        #expect(machine.shutdown() == [.failWaiter(waiting, .shutDown), .failWaiter(connecting, .shutDown),
                                       .closeConnection(Self.c(1)), .closeConnection(Self.c(2))])
        let (late, actions) = Self.lease(&machine)
        #expect(actions == [.failWaiter(late, .shutDown)])
        #expect(machine.released(Self.c(1), reusable: true, now: now) == [.closeConnection(Self.c(1))])
        #expect(machine.http2Established(Self.c(3), origin: Self.secure, for: connecting.id, maxStreams: 100, acceptsStreams: true)
            == [.closeConnection(Self.c(3))])
    }

    // MARK: HTTP/2

    /// A lease on `secure` whose connect opens HTTP/2 connection `id` allowing `maxStreams`, with
    /// `waiting` more leases queued behind it meanwhile; the leases and the actions of the connect.
    func openHTTP2(_ machine: inout Machine, _ id: Int, maxStreams: Int, waiting: Int) -> ([Waiter], [Action]) {
        let (first, actions) = Self.lease(&machine, Self.secure)
        #expect(actions == [.connect(first)])
        var waiters = [first]
        for _ in 0..<waiting {
            let (waiter, actions) = Self.lease(&machine, Self.secure)
            // Waiting for the first connection rather than opening one each.
            #expect(actions.isEmpty)
            waiters.append(waiter)
        }
        let established = machine.http2Established(Self.c(id), origin: Self.secure, for: first.id, maxStreams: maxStreams,
                                                   acceptsStreams: true)
        return (waiters, established)
    }

    @Test func http2MultiplexesUpToTheStreamLimitThenQueues() {
        var machine = Self.machine()
        let (waiters, actions) = openHTTP2(&machine, 1, maxStreams: 2, waiting: 2)
        #expect(actions == [.executeOnHTTP2(waiters[0], Self.c(1), reused: false), .executeOnHTTP2(waiters[1], Self.c(1), reused: true)])
        #expect(machine.isWaiting(waiters[2].id))
        #expect(machine.origins[Self.secure]?.open == 1, "one connection for the origin")
        let (late, more) = Self.lease(&machine, Self.secure)
        #expect(more.isEmpty)
        #expect(machine.http2StreamClosed(Self.c(1)) == [.executeOnHTTP2(waiters[2], Self.c(1), reused: true)])
        #expect(machine.http2StreamClosed(Self.c(1)) == [.executeOnHTTP2(late, Self.c(1), reused: true)])
        #expect(machine.http2[Self.c(1)]?.activeStreams == 2)
    }

    @Test func lowerSettingsHoldStreamsBackUntilEnoughHaveEnded() {
        var machine = Self.machine()
        let (waiters, actions) = openHTTP2(&machine, 1, maxStreams: 100, waiting: 2)
        #expect(actions.count == 3)
        #expect(machine.http2SettingsChanged(Self.c(1), maxStreams: 2).isEmpty)
        let (waiting, queued) = Self.lease(&machine, Self.secure)
        #expect(queued.isEmpty)
        #expect(machine.http2StreamClosed(Self.c(1)).isEmpty, "3 open, 2 allowed: one ending leaves none free")
        #expect(machine.http2StreamClosed(Self.c(1)) == [.executeOnHTTP2(waiting, Self.c(1), reused: true)])
        _ = waiters
    }

    @Test func higherSettingsServeWaiters() {
        var machine = Self.machine()
        let (waiters, _) = openHTTP2(&machine, 1, maxStreams: 1, waiting: 2)
        #expect(machine.http2SettingsChanged(Self.c(1), maxStreams: 3)
            == [.executeOnHTTP2(waiters[1], Self.c(1), reused: true), .executeOnHTTP2(waiters[2], Self.c(1), reused: true)])
    }

    @Test func aStreamCarriesTheWaitersPriority() {
        var machine = Self.machine()
        let (first, _) = Self.lease(&machine, Self.secure, priority: 2)
        let actions = machine.http2Established(Self.c(1), origin: Self.secure, for: first.id, maxStreams: 10, acceptsStreams: true)
        guard case .executeOnHTTP2(let waiter, _, _)? = actions.first else { Issue.record("\(actions)"); return }
        #expect(waiter.priority == 2)
    }

    @Test func aConnectionGoingAwayTakesNoStreamAndTheNextLeaseConnects() {
        var machine = Self.machine()
        let (_, actions) = openHTTP2(&machine, 1, maxStreams: 1, waiting: 1)
        #expect(actions.count == 1)
        // The waiter behind the full connection now opens a new one.
        let waiting = Waiter(id: Machine.WaiterID(2), origin: Self.secure, priority: 0, connectTimeout: .seconds(5))
        #expect(machine.http2GoingAway(Self.c(1)) == [.connect(waiting)])
        #expect(machine.http2StreamClosed(Self.c(1)).isEmpty, "no new stream on it")
        #expect(machine.connectionClosed(Self.c(1)) == [.closeConnection(Self.c(1))])
        #expect(machine.origins[Self.secure]?.open == 1, "only the new connection counts")
    }

    @Test func anHTTP2ConnectionClosingFreesItsSlot() {
        var machine = Self.machine()
        _ = openHTTP2(&machine, 1, maxStreams: 1, waiting: 0)
        let (waiting, queued) = Self.lease(&machine, Self.secure)
        #expect(queued.isEmpty)
        #expect(machine.connectionClosed(Self.c(1)) == [.closeConnection(Self.c(1)), .connect(waiting)])
    }

    @Test func aStreamTheConnectionRefusedPutsTheWaiterBackFirst() {
        var machine = Self.machine()
        let (waiters, _) = openHTTP2(&machine, 1, maxStreams: 2, waiting: 2)
        // The connection had gone away a moment before: the refused waiter, then the queued one,
        // wait for the new connection the refused one opens.
        #expect(machine.http2StreamRefused(Self.c(1), waiter: waiters[1], maxStreams: 2, acceptsStreams: false)
            == [.connect(waiters[1])])
        #expect(machine.origins[Self.secure]?.queue == [waiters[2].id])
        #expect(machine.http2[Self.c(1)]?.activeStreams == 1)
    }

    @Test func anHTTP2ConnectionThatTakesNoStreamFailsItsLease() {
        var machine = Self.machine()
        let (first, _) = Self.lease(&machine, Self.secure)
        #expect(machine.http2Established(Self.c(1), origin: Self.secure, for: first.id, maxStreams: 100, acceptsStreams: false)
            == [.failWaiter(first, .http2ClosedAtOnce)])
    }

    @Test func anOriginThatTurnsOutToSpeakHTTP1LetsItsWaitersConnect() {
        var machine = Self.machine()
        let (first, _) = Self.lease(&machine, Self.secure)
        let (second, waiting) = Self.lease(&machine, Self.secure)
        #expect(waiting.isEmpty)
        #expect(machine.http1Established(Self.c(1), origin: Self.secure, for: first.id, now: now)
            == [.executeOnHTTP1(first, Self.c(1), reused: false), .connect(second)])
    }
}
