'use strict'
// README "Event order": events of one object are delivered in order on the event loop, so a
// call returns before its own events reach the listeners (after start() resolves, isLeader()
// already answers while the events may still be on their way); a state read in a listener
// (isLeader(), isHeld) is at least as new as the event. The same promises as
// python/tests/test_queue_election_client.py::test_the_documented_event_order_holds.
const test = require('node:test')
const assert = require('node:assert/strict')
const { unique, withClients, eventually } = require('./helpers')

const LEADER = ['START', 'OFFER_START', 'OFFER_COMPLETE', 'DETERMINE_START', 'DETERMINE_COMPLETE', 'ELECTED_START', 'ELECTED_COMPLETE']
const FOLLOWER = ['START', 'OFFER_START', 'OFFER_COMPLETE', 'DETERMINE_START', 'DETERMINE_COMPLETE', 'READY_START', 'READY_COMPLETE']
const STOP = ['STOP_START', 'STOP_COMPLETE']

test('a call returns before its own events reach the listeners; isLeader() answers at once', () => withClients(1, async (c) => {
  const member = c.leaderElection(unique('order-return'), 'only')
  let inCall = false
  const seen = []
  member.on('event', (e) => seen.push({ type: e.type, inCall, leader: member.isLeader() }))
  inCall = true
  const started = member.start()
  inCall = false
  await started
  assert.equal(member.isLeader(), true, 'start() resolves with isLeader() already answered')
  await eventually('start events', () => seen.length >= LEADER.length)
  assert.deepEqual(seen.filter((e) => e.inCall), [], 'a listener ran inside start()')
  assert.deepEqual(seen.map((e) => e.type), LEADER)

  inCall = true
  const stopped = member.stop()
  inCall = false
  await stopped
  assert.equal(member.isLeader(), false, 'stop() resolves with isLeader() already answered')
  await eventually('stop events', () => seen.length >= LEADER.length + STOP.length)
  assert.deepEqual(seen.filter((e) => e.inCall), [], 'a listener ran inside stop()')
  assert.deepEqual(seen.map((e) => e.type), [...LEADER, ...STOP])

  const lock = c.writeLock(unique('order-return-lock'))
  const lockEvents = []
  for (const name of ['acquired', 'released']) lock.on(name, (e) => lockEvents.push({ type: e.type, inCall }))
  inCall = true
  const acquiring = lock.acquire()
  inCall = false
  assert.equal(await acquiring, true)
  assert.equal(lock.isHeld, true, 'acquire() resolves with isHeld already answered')
  inCall = true
  const releasing = lock.release()
  inCall = false
  await releasing
  assert.equal(lock.isHeld, false, 'release() resolves with isHeld already answered')
  await eventually('lock events', () => lockEvents.length >= 2)
  assert.deepEqual(lockEvents, [{ type: 'ACQUIRED', inCall: false }, { type: 'RELEASED', inCall: false }])
}))

test('a state read in a listener is at least as new as the event', () => withClients(2, async (a, b) => {
  const root = unique('order-state')
  const first = a.leaderElection(root, 'first')
  const second = b.leaderElection(root, 'second')
  const seen = { first: [], second: [] }
  first.on('event', (e) => seen.first.push([e.type, first.isLeader()]))
  second.on('event', (e) => seen.second.push([e.type, second.isLeader()]))
  // Each step waits for its events before the next one, so that no later event can
  // explain a state that disagrees with the event being delivered.
  await first.start()
  await eventually('first elected', () => seen.first.length === LEADER.length)
  await second.start()
  await eventually('second ready', () => seen.second.length === FOLLOWER.length)
  assert.deepEqual(seen.first.map(([t]) => t), LEADER)
  assert.deepEqual(seen.second.map(([t]) => t), FOLLOWER)
  assert.deepEqual(seen.first.at(-1), ['ELECTED_COMPLETE', true])
  assert.deepEqual(seen.second.at(-1), ['READY_COMPLETE', false])
  await first.stop()
  await eventually('hand-over', () => seen.first.length === LEADER.length + STOP.length &&
    seen.second.length === FOLLOWER.length + 4)
  // STOP_START may read either (the stop may have finished by then); STOP_COMPLETE may not.
  assert.deepEqual(seen.first.slice(LEADER.length).map(([t]) => t), STOP)
  assert.deepEqual(seen.first.at(-1), ['STOP_COMPLETE', false])
  assert.deepEqual(seen.second.slice(FOLLOWER.length).map(([t]) => t), ['DETERMINE_START', 'DETERMINE_COMPLETE', 'ELECTED_START', 'ELECTED_COMPLETE'])
  assert.deepEqual(seen.second.at(-1), ['ELECTED_COMPLETE', true])
  await second.stop()

  // A lock: held until its ACQUIRED was seen, released only then.
  const lock = a.writeLock(unique('order-state-lock'))
  const lockSeen = []
  const record = (e) => lockSeen.push({ type: e.type, held: lock.isHeld, token: lock.fencingToken, eventToken: e.fencingToken })
  lock.on('acquired', record)
  lock.on('released', record)
  await lock.acquire()
  await eventually('ACQUIRED', () => lockSeen.length === 1)
  const token = lock.fencingToken
  await lock.release()
  await eventually('RELEASED', () => lockSeen.length === 2)
  assert.deepEqual(lockSeen, [
    { type: 'ACQUIRED', held: true, token, eventToken: token },
    { type: 'RELEASED', held: false, token: null, eventToken: undefined },
  ])
}))

test('back-to-back starts and stops: a state that disagrees with an event is explained by a later one', () => withClients(1, async (c) => {
  // Nothing waits for the events here, so a listener may see a newer state than its event
  // (an ELECTED_COMPLETE read after the next stop), never an older one: every disagreement
  // must be followed by the event that changed the state.
  const member = c.leaderElection(unique('order-rounds'), 'm')
  const seen = []
  member.on('event', (e) => seen.push([e.type, member.isLeader()]))
  const rounds = 20
  for (let i = 0; i < rounds; i++) {
    await member.start()
    await member.stop()
  }
  await member.start()
  await eventually('every event', () => seen.length === (rounds + 1) * LEADER.length + rounds * STOP.length, 10000)
  const expected = []
  for (let i = 0; i < rounds; i++) expected.push(...LEADER, ...STOP)
  expected.push(...LEADER)
  assert.deepEqual(seen.map(([t]) => t), expected, 'events in Apache\'s order, round after round')
  seen.forEach(([type, leader], i) => {
    const later = seen.slice(i + 1).map(([t]) => t)
    if (type === 'ELECTED_COMPLETE' && !leader) {
      assert.ok(later.includes('STOP_START'), `event ${i}: ELECTED_COMPLETE read isLeader() false, and no stop came after it`)
    }
    if (type === 'STOP_COMPLETE' && leader) {
      assert.ok(later.includes('ELECTED_START'), `event ${i}: STOP_COMPLETE read isLeader() true, and no election came after it`)
    }
  })
  assert.deepEqual(seen.at(-1), ['ELECTED_COMPLETE', true], 'the last event, with nothing after it, reads the state it tells')
  await member.stop()
}))
