package services

// SandboxBuilds returns how many times the simulated providers' records
// were built in this process (SandboxStores, the sandbox card network).
func SandboxBuilds() int64 { return sandboxBuilds.Load() }
