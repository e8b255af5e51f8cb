package changes

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// SSE is one event read from a stream.
type SSE struct {
	ID    string
	Event string
	Data  []byte
}

// maxEventBytes bounds one line of a stream read by ReadEvents: an object
// rendered at the latest microversion is a few kilobytes, a node with a
// large inventory in its properties more.
const maxEventBytes = 8 << 20

// ReadEvents reads Server-Sent Events from r and gives each to fn until r
// ends or fn fails; comments (heartbeats) are skipped. It is the client
// side of the stream, for tests, benchmarks and tools.
func ReadEvents(r io.Reader, fn func(SSE) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxEventBytes)
	var ev SSE
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Event != "" || data.Len() > 0 {
				ev.Data = bytes.Clone(data.Bytes())
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, data = SSE{}, bytes.Buffer{}
		case strings.HasPrefix(line, ":"):
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				ev.ID = value
			case "event":
				ev.Event = value
			case "data":
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.WriteString(value)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read event stream: %w", err)
	}
	return nil
}
