package plugin

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// watchedList is one list what --watch shows was read from, and the
// objects the read saw in it.
type watchedList struct {
	// via is the client of the cluster it was read from, nil for the
	// kubeconfig's; cluster names that cluster.
	via     metadata.Interface
	cluster string
	gvr     schema.GroupVersionResource
	// namespace is "" for every namespace and for a cluster-scoped kind.
	namespace string
	// selector is the label query the objects matched.
	selector string
	// name is the one object read, "" for the whole list.
	name string
	// seen is the resourceVersion of each object read, by its
	// namespace/name key.
	seen map[string]string
}

// key tells lists apart: the same list read again is watched once.
func (l watchedList) key() string {
	return fmt.Sprintf("%s|%s|%s|%s|%s", l.cluster, l.gvr, l.namespace, l.selector, l.name)
}

// seenOf is what a read saw of objs, to compare the watch's first list
// with.
func seenOf[T any, P interface {
	*T
	metav1.Object
}](objs []T) map[string]string {
	seen := make(map[string]string, len(objs))
	for i := range objs {
		o := P(&objs[i])
		seen[cache.NewObjectName(o.GetNamespace(), o.GetName()).String()] = o.GetResourceVersion()
	}
	return seen
}

// listWatch follows, by their metadata, the lists what --watch shows was
// read from, and says on changed when any of them changes. --watch reads
// again only then: a cluster where nothing changes costs it no request,
// where reading at every tick would list every kind once a second.
type listWatch struct {
	client  metadata.Interface
	changed chan struct{}
	// polling is set once a list could not be watched (the user may list
	// it but not watch it): --watch then reads at its interval instead.
	polling atomic.Bool
	errOut  io.Writer
	warned  sync.Once

	running map[string]context.CancelFunc
}

func newListWatch(client metadata.Interface, errOut io.Writer) *listWatch {
	return &listWatch{
		client:  client,
		changed: make(chan struct{}, 1),
		errOut:  errOut,
		running: map[string]context.CancelFunc{},
	}
}

func (w *listWatch) signal() {
	select {
	case w.changed <- struct{}{}:
	default: // one pending signal stands for any number of changes
	}
}

// follow watches exactly lists: those new start, and those the last read
// no longer came from stop.
func (w *listWatch) follow(ctx context.Context, lists []watchedList) {
	want := map[string]bool{}
	for _, l := range lists {
		k := l.key()
		want[k] = true
		if _, ok := w.running[k]; !ok {
			w.running[k] = w.start(ctx, l)
		}
	}
	for k, stop := range w.running {
		if !want[k] {
			stop()
			delete(w.running, k)
		}
	}
}

// stop ends every watch.
func (w *listWatch) stop() {
	for k, stop := range w.running {
		stop()
		delete(w.running, k)
	}
}

// start watches l until the returned function is called. Only each
// object's name and resourceVersion are kept. A change is anything after
// the watch's first list, and that first list itself where it differs
// from what the read saw: what changed between the read and the watch's
// start is not lost.
func (w *listWatch) start(ctx context.Context, l watchedList) context.CancelFunc {
	ctx, stop := context.WithCancel(ctx)
	client := w.client
	if l.via != nil {
		client = l.via
	}
	inf := metadatainformer.NewFilteredMetadataInformer(client, l.gvr, l.namespace, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
		o.LabelSelector = l.selector
		if l.name != "" {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", l.name).String()
		}
	}).Informer()
	_ = inf.SetTransform(func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			m.ObjectMeta = metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name, ResourceVersion: m.ResourceVersion}
		}
		return obj, nil
	})
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		if apierrors.IsForbidden(err) {
			stop()
			w.polling.Store(true)
			w.warned.Do(func() {
				fmt.Fprintf(w.errOut, "kubectl kro: cannot watch %s, reading again at --watch-interval instead: %v\n", l.gvr.GroupResource(), err)
			})
		}
		// Anything else (a kind no longer served, a lost connection) the
		// next read shows, or finds gone; the informer retries meanwhile.
		w.signal()
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, initial bool) {
			if !initial {
				w.signal()
			}
		},
		UpdateFunc: func(old, cur any) {
			// A relist hands every object over again, unchanged.
			if resourceVersion(old) != resourceVersion(cur) {
				w.signal()
			}
		},
		DeleteFunc: func(any) { w.signal() },
	})
	go inf.RunWithContext(ctx)
	go func() {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return
		}
		if differs(l.seen, inf.GetStore().List()) {
			w.signal()
		}
	}()
	return stop
}

func resourceVersion(obj any) string {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		return m.ResourceVersion
	}
	return ""
}

// differs tells whether the objects a watch listed first are not the ones
// a read saw, in the same versions.
func differs(seen map[string]string, listed []any) bool {
	if len(listed) != len(seen) {
		return true
	}
	for _, obj := range listed {
		m, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			return true
		}
		rv, ok := seen[cache.NewObjectName(m.Namespace, m.Name).String()]
		if !ok || rv != m.ResourceVersion {
			return true
		}
	}
	return false
}

// watchView is one read of what --watch shows.
type watchView struct {
	// key is what it shows, ages aside: it is drawn again only when the
	// key changes.
	key string
	// lists are where it was read from, to be followed.
	lists []watchedList
	draw  func() error
	// done ends the watch once it is drawn: what it waited for is there.
	done bool
	// silent is a view with nothing to print (no separator either): one
	// gone, with -o json|yaml.
	silent bool
}

// clearScreen moves the cursor home and clears the terminal, for a table
// redrawn in place.
const clearScreen = "\x1b[H\x1b[2J"

// redrawOnChange draws what read returns, and again each time a list it
// was read from changes and it shows something else, until ctx ends: a
// table (output "") redrawn in place on a terminal, and one after another,
// a blank line between them, into a file or a pipe (where the codes that
// clear a terminal would only be noise); with -o json|yaml one document
// after another (YAML documents separated by ---), as kubectl get --watch
// -o prints them; any other output as draw writes it.
func redrawOnChange(ctx context.Context, w *listWatch, out io.Writer, output string, interval time.Duration, read func() (*watchView, error)) error {
	defer w.stop()
	drawn, last := false, ""
	inPlace := isTerminal(out)
	for {
		// A change from here on is read by this pass, or by the next.
		select {
		case <-w.changed:
		default:
		}
		readAt := time.Now()
		v, err := read()
		if err != nil {
			if ctx.Err() != nil {
				return nil // interrupted while watching: a normal end
			}
			return err
		}
		if (!drawn || v.key != last) && !v.silent {
			switch {
			case output == "" && inPlace:
				fmt.Fprint(out, clearScreen)
			case output == "" && drawn:
				fmt.Fprintln(out)
			case output == "yaml" && drawn:
				fmt.Fprintln(out, "---")
			}
			if err := v.draw(); err != nil {
				return err
			}
			drawn = true
		}
		last = v.key
		if v.done {
			return nil
		}
		w.follow(ctx, v.lists)
		var poll <-chan time.Time
		if w.polling.Load() {
			poll = time.After(interval)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.changed:
		case <-poll:
		}
		// A burst of changes is read once, at most once an interval.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(readAt.Add(interval))):
		}
	}
}

// addWatchFlags adds --watch and --watch-interval.
func addWatchFlags(cmd *cobra.Command, watch *bool, interval *time.Duration) {
	cmd.Flags().BoolVarP(watch, "watch", "w", false, "draw again whenever what is shown changes")
	cmd.Flags().DurationVar(interval, "watch-interval", time.Second, "the shortest time between two reads of --watch while things change")
}

// readLog collects the lists a read of what --watch shows came from.
type readLog struct {
	mu    sync.Mutex
	lists []watchedList
}

// recording is the cluster with a new log of what is read through it;
// the workload clusters connected through it log there too.
func (c *cluster) recording() (*cluster, *readLog) {
	rc := *c
	rc.reads = &readLog{}
	return &rc, rc.reads
}

// noteList logs that a list of this cluster was read, for --watch to
// follow; nothing when no read is being logged.
func (c *cluster) noteList(l watchedList) {
	if c.reads == nil {
		return
	}
	l.via, l.cluster = c.metadata, c.name
	c.reads.mu.Lock()
	defer c.reads.mu.Unlock()
	c.reads.lists = append(c.reads.lists, l)
}

// noteObject logs that one object was read by name: obj, or nil when it
// was not found (its creation is a change too).
func (c *cluster) noteObject(gvr schema.GroupVersionResource, namespace, name string, obj metav1.Object) {
	seen := map[string]string{}
	if obj != nil {
		seen[cache.NewObjectName(obj.GetNamespace(), obj.GetName()).String()] = obj.GetResourceVersion()
	}
	c.noteList(watchedList{gvr: gvr, namespace: namespace, name: name, seen: seen})
}
