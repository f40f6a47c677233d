import zkrecipes from './index.js'

export const {
  Client, Lock, WriteLock, ReadWriteLock, DistributedQueue, WorkQueue, Job, LeaderElectionSupport, ZkError, ERROR_CODES,
  LOCK_EVENTS, ELECTION_EVENTS, CONNECTION_STATES,
} = zkrecipes
export default zkrecipes
