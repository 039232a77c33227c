import DBusKit

extension Device {
    /// Connects, subscribes to the notifications of one characteristic and runs `body` with
    /// them as a stream of ``SubscriptionEvent``s (``NotificationSubscription/events``); with a ``ReconnectPolicy`` the subscription
    /// is kept across link losses. StopNotify and the Disconnect of a connection we made when
    /// `body` ends, however it ends.
    ///
    /// Setting up: connects (``connect(timeout:)``: the device must be known to BlueZ, see
    /// ``find(_:on:timeout:)``), waits for ServicesResolved, asks `characteristic` for the
    /// characteristic on that connection (one that can neither notify nor indicate is refused
    /// before anything is sent: ``BLEError/notSupported(_:_:)``), registers the value watcher,
    /// then StartNotify (InProgress answers retried; a Failed answer that comes with the link
    /// dropping is the link lost): all within `timeout`. `body` runs once StartNotify has
    /// answered; values notified before that answer are in the stream too. A link lost during
    /// the set-up fails it, with or without a policy, except on a link found up
    /// (``ConnectionOrigin/alreadyConnected``): bluetoothd 5.66 refuses StartNotify with
    /// `org.bluez.Error.NotConnected` while it is disconnecting a link (its 2 s disconnect
    /// timer, e.g. after the command before failed), so when StartNotify is refused so, or the
    /// link goes down before the subscription is set up, this waits within `timeout` for
    /// Connected=false, connects anew and sets up again on that link (which is then ours to
    /// disconnect at the end).
    ///
    /// The stream: every value, once, in bus order, each with the bytes its own signal
    /// carried, tagged with its link number (unbounded buffer: none is dropped, whatever the
    /// reader's pace), plus ``SubscriptionEvent/linkLost(connection:)`` in bus order with
    /// the values. One watcher sees both for the whole subscription, so a value can be
    /// neither missed nor counted twice across a reconnection. The stream ends with
    /// ``BLEError/unavailable(_:)`` when bluetoothd leaves or the bus is lost; without a
    /// policy, with ``BLEError/disconnected(_:)`` (operation `notifications`) right after the
    /// link loss.
    ///
    /// Reconnecting (with `reconnect`): bluetoothd 5.66 keeps this client's StartNotify session
    /// over a link loss (Notifying stays true) and re-enables it by itself once the link and
    /// GATT are back (bluez/src/gatt-client.c). After a loss, attempts follow the policy's
    /// delays until its deadline: find the device by scanning if BlueZ removed its object,
    /// connect, wait for ServicesResolved, resolve the characteristic again (its object path
    /// may change), StartNotify again (it answers success, InProgress while bluetoothd is
    /// still re-registering, retried; or Failed "Already notifying" on older bluetoothd, taken
    /// as success; a removed device's session is created anew), then
    /// ``SubscriptionEvent/restored(connection:)``. A failed attempt (disconnected, timed
    /// out, BlueZ failure, busy, device not found) is reported as
    /// ``SubscriptionEvent/reconnectFailed(attempt:error:retryIn:)`` and retried; other
    /// errors (Bluetooth unavailable, permission, the characteristic gone) end the stream with
    /// that error; reaching the deadline without the subscription restored ends it, at the
    /// deadline, with ``BLEError/timedOut(_:)`` (connect).
    ///
    /// A GATT database change (Service Changed: bluetoothd removes the service's objects and
    /// exports them again at new paths), the link up: a StartNotify pending on a removed
    /// object fails at once and goes again to the characteristic found again by its service
    /// and characteristic UUIDs (``ConnectedDevice/relocationLimit`` times at most); a
    /// subscription whose object leaves after it was set up subscribes again on the new
    /// object, its values in the same stream (the values sent meanwhile reached no session).
    /// Not found again within ``characteristicRelocationTimeout``: the set-up, or the stream,
    /// ends with ``BLEError/notSupported(_:_:)`` naming the characteristic.
    ///
    /// At the end: StopNotify on every characteristic path a StartNotify succeeded on (waiting
    /// first, at most ``CleanupPolicy/pendingStartTimeout``, for one still pending), even when
    /// the link is down (the session is kept), errors dropped; then Disconnect if the last
    /// connection was made by us and is still up (a reconnection's Connect that is
    /// interrupted is abandoned by ``connect(timeout:)`` itself), waiting for the reply up to
    /// `disconnectTimeout` after a success, at most ``CleanupPolicy/interruptedTimeout``
    /// otherwise (zero: only put on the wire; bluetoothd completes it without us).
    ///
    /// With `method` ``NotifyMethod/acquireNotify``, the values are the datagrams of the
    /// socket AcquireNotify hands over instead of the changes of Value: only what the device
    /// notified, never what some client read (StartNotify's Value also changes on every
    /// read). Everything above holds, with these differences: AcquireNotify is asked on each
    /// connection (bluetoothd shuts the socket on a link loss, so ``SubscriptionEvent/restored(connection:)``
    /// follows the new AcquireNotify's answer), the socket is closed at the end instead of
    /// StopNotify, values the device sends before the CCC write is answered are not
    /// delivered, and a link loss may be reported before the last values of that link (the
    /// socket and the bus are read apart; every value carries its link's number). StartNotify
    /// is used instead, and ``NotificationSubscription/fallback`` says why, when the bus
    /// cannot pass file descriptors, when the characteristic only indicates, and when the
    /// set-up's AcquireNotify is answered InProgress (another client's StartNotify session);
    /// a reconnection or a follow answered so turns to StartNotify too, reported in the stream
    /// as ``SubscriptionEvent/fellBackToStartNotify(_:)``. NotPermitted "Notify acquired" (another
    /// client holds it) fails the set-up with ``BLEError/busy(_:dbusError:message:)``:
    /// StartNotify would be refused the same.
    ///
    /// The subscription's states and what moves it between them: SubscriptionStateMachine.swift.
    /// - Parameters:
    ///   - timeout: the limit for the set-up (connect, services, characteristic, StartNotify).
    ///   - reconnect: how to reconnect after a link loss; nil ends the stream at the first loss.
    ///   - method: how notifications are turned on (default ``NotifyMethod/startNotify``).
    ///   - disconnectTimeout: how long to wait for the Disconnect reply after a success; zero
    ///     sends it and returns once it has left for the bus.
    ///   - characteristic: finds the characteristic on a connection (called once per
    ///     connection); what it throws ends the set-up or the subscription.
    /// - Returns: what `body` returns.
    /// - Throws: the errors of ``connect(timeout:)``, ``waitForServicesResolved(timeout:)``,
    ///   `characteristic`, ``BLEError/timedOut(_:)`` / ``BLEError/failed(_:dbusError:message:)``
    ///   (notification setup), what `body` throws (the stream's errors when it lets them out);
    ///   a ``BLEError/disconnected(_:)`` that came with Bluetooth going away is thrown as that
    ///   ``BLEError/unavailable(_:)``.
    public func withNotificationSubscription<T: Sendable>(
        timeout: Duration,
        reconnect: ReconnectPolicy? = nil,
        method: NotifyMethod = .startNotify,
        disconnectTimeout: Duration = .seconds(4),
        characteristic: @escaping @Sendable (ConnectedDevice) async throws -> GATTCharacteristic,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (NotificationSubscription) async throws -> T
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        let origin: ConnectionOrigin
        do {
            origin = try await connect(timeout: timeout)
        } catch {
            throw await refinedLinkLoss(error)
        }
        let subscription = Subscription(device: self, origin: origin, policy: reconnect, method: method, characteristic: characteristic)
        var events: SubscriptionEvents?
        let result: Result<T, any Error>
        do {
            let (found, stream) = try await subscription.setUp(on: origin, deadline: deadline)
            events = stream
            result = .success(try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
                group.addTask { await subscription.maintain(streamingInto: stream.channel) }
                let (method, fallback) = subscription.machine.withLock { ($0.method, $0.fallback) }
                let value = try await body(NotificationSubscription(characteristic: found, method: method, fallback: fallback,
                                                                    events: stream))
                group.cancelAll()
                return value
            })
        } catch {
            result = .failure(error)
        }
        await subscription.end(succeeded: (try? result.get()) != nil, disconnectTimeout: disconnectTimeout, closing: events?.channel)
        do {
            return try result.get()
        } catch {
            throw await refinedLinkLoss(error)
        }
    }

    /// How long a characteristic whose object left (the link up) is waited for at a new
    /// object before the subscription (or the set-up of notifications) ends with
    /// ``BLEError/notSupported(_:_:)``.
    public static let characteristicRelocationTimeout: Duration = .seconds(5)
}
