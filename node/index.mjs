import zkrecipes from './index.js'

export const {
  Client, Lock, WriteLock, ReadWriteLock, DistributedQueue, LeaderElectionSupport, ZkError, ERROR_CODES,
} = zkrecipes
export default zkrecipes
