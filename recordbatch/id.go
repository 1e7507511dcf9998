package recordbatch

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// IDHeader is the record header that carries a record's kcheck id, so that
// a read-back can match the records in a log to what was sent.
const IDHeader = "kcheck-id"

// RecordID returns the value of a record's kcheck-id header, or -1 when it
// has none.
func RecordID(hs []kmsg.Header) int64 {
	for _, h := range hs {
		if h.Key == IDHeader {
			if id, err := strconv.ParseInt(string(h.Value), 10, 64); err == nil {
				return id
			}
		}
	}
	return -1
}
