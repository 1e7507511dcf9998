// The process's CPU time where getrusage is not available: unknown (0).

//go:build !unix

package loadgen

import "time"

func processCPU() time.Duration { return 0 }
