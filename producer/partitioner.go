package producer

// KeyPartition returns the partition that the Java client's default
// partitioner picks for a non-nil key among numPartitions partitions:
// toPositive(murmur2(key)) % numPartitions. It panics if numPartitions < 1.
func KeyPartition(key []byte, numPartitions int32) int32 {
	if numPartitions < 1 {
		panic("producer: KeyPartition with fewer than one partition")
	}
	return toPositive(Murmur2(key)) % numPartitions
}

// Murmur2 returns the 32 bit MurmurHash2 of b with the seed the Java client
// uses (org.apache.kafka.common.utils.Utils.murmur2), as a Java int.
func Murmur2(b []byte) int32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	h := seed ^ uint32(len(b))
	for ; len(b) >= 4; b = b[4:] {
		k := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch len(b) {
	case 3:
		h ^= uint32(b[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(b[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(b[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// toPositive clears the sign bit, as Utils.toPositive does: unlike an
// absolute value it maps math.MinInt32 to 0.
func toPositive(n int32) int32 { return n & 0x7fffffff }
