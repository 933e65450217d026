package move

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// The PVC's name must be the remote PVC's on the provider (the remote pod
// mounts the twin's PVC of the same name), so the side of the copy on the
// provider always uses the PVC itself, and the local side a temporary PVC
// (<name>-liqo-move): moving to a provider, the PVC is made again (bound
// there by its first consumer, the receiving mover) and the source volume
// is reached through the temporary PVC bound to it; moving to a local
// node, the copy goes to the temporary PVC, whose volume the PVC is then
// bound to. Either way the source volume's PV is kept (reclaim policy
// Retain) until the PVC is bound to the copy, and a failed copy binds the
// PVC to it again.

// tmpSuffix names the temporary PVC of a move: NAME-liqo-move.
const tmpSuffix = "-liqo-move"

// movingAnnotation marks a PV a move keeps (reclaim policy Retain) with
// the PVC it moves, so that an interrupted move can be found.
const movingAnnotation = "storage.liqo.io/moving-pvc"

// toProvider moves a local volume (PV src) to the target provider.
func (m *mover) toProvider(ctx context.Context, src *corev1.PersistentVolume) error {
	tmp := m.name + tmpSuffix
	orig := src.Spec.PersistentVolumeReclaimPolicy
	m.o.out.Step("Keeping PV %s while the PVC is made again on %s", src.Name, m.o.TargetNode)
	if err := m.keep(ctx, src.Name); err != nil {
		return err
	}
	if err := m.deleteClaim(ctx, m.name); err != nil {
		return m.restore(ctx, src.Name, orig, fmt.Errorf("deleting PVC %s/%s: %w", m.ns, m.name, err))
	}
	if err := m.prebind(ctx, src.Name, tmp); err != nil {
		return m.restore(ctx, src.Name, orig, err)
	}
	if err := m.createClaim(ctx, tmp, src.Name); err != nil {
		return m.restore(ctx, src.Name, orig, err)
	}
	if err := m.createClaim(ctx, m.name, ""); err != nil {
		return m.restore(ctx, src.Name, orig, err)
	}
	// The provider's side listens: its address as this cluster sees it is
	// in its pod's status; the local side connects through the fabric.
	sum, err := m.copy(ctx, side{claim: tmp}, side{claim: m.name, node: m.o.TargetNode}, false)
	if err != nil {
		return m.restore(ctx, src.Name, orig, err)
	}
	m.o.out.Step("Copy verified (%s); deleting the source volume", sum)
	if err := m.deleteClaim(ctx, tmp); err != nil {
		return fmt.Errorf("the PVC is on %s with the data; deleting the temporary PVC %s/%s failed (%w): delete it and PV %s by hand",
			m.o.TargetNode, m.ns, tmp, err, src.Name)
	}
	if err := m.setReclaim(ctx, src.Name, corev1.PersistentVolumeReclaimDelete); err != nil {
		return fmt.Errorf("the PVC is on %s with the data; the source PV %s is kept (%w): delete it by hand", m.o.TargetNode, src.Name, err)
	}
	m.o.out.Info("PVC %s/%s moved to %s", m.ns, m.name, m.o.TargetNode)
	m.event(ctx, corev1.EventTypeNormal, "VolumeMoved", fmt.Sprintf("moved from PV %s to %s by liqoctl move volume (%s)", src.Name, m.o.TargetNode, sum))
	return nil
}

// toLocal moves a volume (PV src, at from) to the target local node.
func (m *mover) toLocal(ctx context.Context, src *corev1.PersistentVolume, from place) error {
	tmp := m.name + tmpSuffix
	if err := m.createClaim(ctx, tmp, ""); err != nil {
		return err
	}
	// The provider's side, if any, listens (see toProvider).
	sum, err := m.copy(ctx, side{claim: m.name}, side{claim: tmp, node: m.o.TargetNode}, from.remote())
	if err != nil {
		if derr := m.deleteClaim(ctx, tmp); derr != nil {
			err = fmt.Errorf("%w; deleting the temporary PVC %s/%s also failed: %v", err, m.ns, tmp, derr)
		}
		err = fmt.Errorf("%w; PVC %s/%s is unchanged, on PV %s", err, m.ns, m.name, src.Name)
		m.event(ctx, corev1.EventTypeWarning, "VolumeMoveFailed", err.Error())
		return err
	}
	m.o.out.Step("Copy verified (%s); binding PVC %s/%s to the copy", sum, m.ns, m.name)
	c, err := m.cs.CoreV1().PersistentVolumeClaims(m.ns).Get(ctx, tmp, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the PVC of the copy: %w; PVC %s/%s is unchanged", err, m.ns, m.name)
	}
	dst := c.Spec.VolumeName
	both := fmt.Sprintf("the data is on PV %s (the original) and PV %s (the copy), both kept", src.Name, dst)
	for _, pv := range []string{src.Name, dst} {
		if err := m.keep(ctx, pv); err != nil {
			return fmt.Errorf("%w; PVC %s/%s is unchanged", err, m.ns, m.name)
		}
	}
	for _, claim := range []string{tmp, m.name} {
		if err := m.deleteClaim(ctx, claim); err != nil {
			return fmt.Errorf("deleting PVC %s/%s: %w; %s", m.ns, claim, err, both)
		}
	}
	if err := m.prebind(ctx, dst, m.name); err != nil {
		return fmt.Errorf("%w; %s", err, both)
	}
	if err := m.createClaim(ctx, m.name, dst); err != nil {
		return fmt.Errorf("%w; %s", err, both)
	}
	if err := m.waitBound(ctx, m.name); err != nil {
		return fmt.Errorf("%w; %s", err, both)
	}
	for pv, policy := range map[string]corev1.PersistentVolumeReclaimPolicy{src.Name: corev1.PersistentVolumeReclaimDelete, dst: src.Spec.PersistentVolumeReclaimPolicy} {
		if err := m.setReclaim(ctx, pv, policy); err != nil {
			return fmt.Errorf("the PVC is on %s with the data; PV %s: %w", m.o.TargetNode, pv, err)
		}
	}
	m.o.out.Info("PVC %s/%s moved to %s", m.ns, m.name, m.o.TargetNode)
	m.event(ctx, corev1.EventTypeNormal, "VolumeMoved", fmt.Sprintf("moved from PV %s to %s by liqoctl move volume (%s)", src.Name, m.o.TargetNode, sum))
	return nil
}

// restore binds the PVC to its source volume src again after a failed
// move to a provider, and gives src its reclaim policy back; cause is
// what failed, returned with what restore did.
func (m *mover) restore(ctx context.Context, src string, policy corev1.PersistentVolumeReclaimPolicy, cause error) error {
	// A failed move may have used up the context: the restoration gets
	// its own time.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	m.o.out.Warn("the move failed (%v); binding PVC %s/%s to its source volume again", cause, m.ns, m.name)
	steps := []func() error{
		func() error { return m.deleteClaim(ctx, m.name+tmpSuffix) },
		// The new PVC, and with it the empty volume on the provider.
		func() error { return m.deleteClaim(ctx, m.name) },
		func() error { return m.prebind(ctx, src, m.name) },
		func() error { return m.createClaim(ctx, m.name, src) },
		func() error { return m.waitBound(ctx, m.name) },
		func() error { return m.setReclaim(ctx, src, policy) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("%w; restoring PVC %s/%s on its source volume failed too (%v): its data is kept in PV %s (reclaim policy Retain)",
				cause, m.ns, m.name, err, src)
		}
	}
	err := fmt.Errorf("%w; PVC %s/%s is bound to its source volume (PV %s) again, its data unchanged", cause, m.ns, m.name, src)
	m.event(ctx, corev1.EventTypeWarning, "VolumeMoveFailed", err.Error())
	return err
}

// event tells what the move did on the PVC, where kubectl describe shows
// it; best effort, as the command's output says it too.
func (m *mover) event(ctx context.Context, kind, reason, msg string) {
	// After a failure the command's context may be spent.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	pvc, err := m.cs.CoreV1().PersistentVolumeClaims(m.ns).Get(ctx, m.name, metav1.GetOptions{})
	if err != nil {
		return
	}
	now := metav1.Now()
	_, _ = m.cs.CoreV1().Events(m.ns).Create(ctx, &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: m.name + ".", Namespace: m.ns},
		InvolvedObject: corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: m.ns, Name: m.name,
			UID: pvc.UID, ResourceVersion: pvc.ResourceVersion},
		Type: kind, Reason: reason, Message: msg, Count: 1, FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "liqoctl"},
	}, metav1.CreateOptions{})
}

// side is one end of the copy: the PVC it mounts and, for the target, the
// node it must run on (the source's runs where its volume is).
type side struct {
	claim, node string
}

// moverPort is where the listening side accepts.
const moverPort = 7070

// copy runs the two movers and returns the verified summary. The sender
// listens when senderListens, else the receiver does.
func (m *mover) copy(ctx context.Context, send, recv side, senderListens bool) (string, error) {
	listener, dialer := recv, send
	lrole, drole := "receive", "send"
	if senderListens {
		listener, dialer, lrole, drole = send, recv, "send", "receive"
	}
	doing := map[string]string{"send": "sending", "receive": "receiving"}
	pods := m.cs.CoreV1().Pods(m.ns)
	var made []string
	defer func() {
		for _, name := range made {
			_ = pods.Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		}
	}()
	m.o.out.Step("Starting the %s mover (PVC %s)", doing[lrole], listener.claim)
	lp, err := pods.Create(ctx, m.pod(lrole, listener, fmt.Sprintf("--listen=:%d", moverPort)), metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("creating the %s mover: %w", doing[lrole], err)
	}
	made = append(made, lp.Name)
	var ip, why string
	if err := m.poll(ctx, func() (bool, error) {
		p, err := pods.Get(ctx, lp.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if done, msg := finished(p); done {
			return false, fmt.Errorf("the %s mover ended before the copy: %s", doing[lrole], msg)
		}
		why = pending(p)
		ip = p.Status.PodIP
		return p.Status.Phase == corev1.PodRunning && ip != "", nil
	}); err != nil {
		return "", fmt.Errorf("waiting for the %s mover %s to run: %w (%s)", doing[lrole], lp.Name, err, why)
	}
	m.o.out.Step("Starting the %s mover (PVC %s), connecting to %s", doing[drole], dialer.claim, ip)
	dp, err := pods.Create(ctx, m.pod(drole, dialer, fmt.Sprintf("--connect=%s:%d", ip, moverPort)), metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("creating the %s mover: %w", doing[drole], err)
	}
	made = append(made, dp.Name)
	sender, receiver := dp.Name, lp.Name
	if senderListens {
		sender, receiver = lp.Name, dp.Name
	}
	results := map[string]string{}
	failed := map[string]bool{}
	lastReport := time.Now()
	if err := m.poll(ctx, func() (bool, error) {
		for _, name := range []string{lp.Name, dp.Name} {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if done, msg := finished(p); done {
				results[name], failed[name] = msg, p.Status.Phase == corev1.PodFailed
			}
		}
		if time.Since(lastReport) > 5*time.Second {
			lastReport = time.Now()
			m.o.out.Step("  copying: %s", m.progress(ctx, sender))
		}
		return len(results) == 2, nil
	}); err != nil {
		return "", fmt.Errorf("waiting for the copy: %w (sender: %s; receiver: %s)", err, orNone(results[sender]), orNone(results[receiver]))
	}
	if failed[sender] || failed[receiver] || results[sender] != results[receiver] || !strings.HasPrefix(results[sender], "sha256=") {
		return "", fmt.Errorf("the copy failed: sender: %s; receiver: %s", orNone(results[sender]), orNone(results[receiver]))
	}
	return results[sender], nil
}

// progress is the sender's last line (bytes sent so far), if its log can
// be read: it is only news for the user, so any failure is just said.
func (m *mover) progress(ctx context.Context, sender string) string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	b, err := m.cs.CoreV1().Pods(m.ns).GetLogs(sender, &corev1.PodLogOptions{TailLines: ptr.To[int64](1)}).DoRaw(ctx)
	if line := strings.TrimSpace(string(b)); err == nil && line != "" {
		return line
	}
	return "waiting for the movers"
}

// pod is a mover of role on s, with the address argument.
func (m *mover) pod(role string, s side, addr string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "liqo-mover-" + role + "-", Namespace: m.ns,
			Labels: moverLabels(m.name)},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers: []corev1.Container{{
				Name: "mover", Image: m.o.MoverImage,
				Args:                     []string{"--role=" + role, "--dir=/data", addr, "--timeout=" + m.o.ConnectTimeout.String()},
				VolumeMounts:             []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				Resources:                *m.o.Resources.DeepCopy(),
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: s.claim}}}},
		},
	}
	if s.node != "" {
		// By name, not by a label: a virtual node's hostname label is not
		// guaranteed. The scheduler then binds the PVC there.
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
				Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{s.node}}}}}}}}
	}
	return p
}

// finished tells whether p ended, with its termination message.
func finished(p *corev1.Pod) (bool, string) {
	if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		return false, ""
	}
	for _, c := range p.Status.ContainerStatuses {
		if t := c.State.Terminated; t != nil {
			return true, strings.TrimSpace(t.Message)
		}
	}
	return true, string(p.Status.Phase)
}

// pending says why p does not run yet: the scheduler's or the provider's
// message, else its phase.
func pending(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message != "" {
			return c.Message
		}
	}
	if p.Status.Message != "" {
		return p.Status.Message
	}
	return "phase " + string(p.Status.Phase)
}

func orNone(s string) string {
	if s == "" {
		return "no result"
	}
	return s
}

// keep sets PV name's reclaim policy to Retain, marked as kept by this
// move (see kept): deleting its PVC then leaves its data.
func (m *mover) keep(ctx context.Context, name string) error {
	return m.reclaim(ctx, name, corev1.PersistentVolumeReclaimRetain, true)
}

// setReclaim sets PV name's reclaim policy, no longer kept by a move.
func (m *mover) setReclaim(ctx context.Context, name string, policy corev1.PersistentVolumeReclaimPolicy) error {
	return m.reclaim(ctx, name, policy, false)
}

func (m *mover) reclaim(ctx context.Context, name string, policy corev1.PersistentVolumeReclaimPolicy, mark bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pv, err := m.cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pv.Spec.PersistentVolumeReclaimPolicy == policy && (pv.Annotations[movingAnnotation] != "") == mark {
			return nil
		}
		pv.Spec.PersistentVolumeReclaimPolicy = policy
		if mark {
			metav1.SetMetaDataAnnotation(&pv.ObjectMeta, movingAnnotation, m.ns+"/"+m.name)
		} else {
			delete(pv.Annotations, movingAnnotation)
		}
		_, err = m.cs.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("setting the reclaim policy of PV %s to %s: %w", name, policy, err)
		}
		return nil
	})
}

// prebind reserves PV name for claim (of the namespace) once it is
// Released: the PV controller binds them when the claim exists.
func (m *mover) prebind(ctx context.Context, name, claim string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pv, err := m.cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: m.ns, Name: claim}
		if _, err := m.cs.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("reserving PV %s for PVC %s/%s: %w", name, m.ns, claim, err)
		}
		return nil
	})
}

// createClaim makes the user's PVC again as name, bound to PV volume if
// set.
func (m *mover) createClaim(ctx context.Context, name, volume string) error {
	pvc := m.spec.DeepCopy()
	pvc.Name, pvc.Spec.VolumeName = name, volume
	if name != m.name {
		pvc.Labels = moverLabels(m.name)
	}
	if _, err := m.cs.CoreV1().PersistentVolumeClaims(m.ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating PVC %s/%s: %w", m.ns, name, err)
	}
	return nil
}

// deleteClaim deletes PVC name and waits until it is gone.
func (m *mover) deleteClaim(ctx context.Context, name string) error {
	pvcs := m.cs.CoreV1().PersistentVolumeClaims(m.ns)
	if err := pvcs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return m.poll(ctx, func() (bool, error) {
		_, err := pvcs.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// waitBound waits for PVC name to be Bound.
func (m *mover) waitBound(ctx context.Context, name string) error {
	return m.poll(ctx, func() (bool, error) {
		pvc, err := m.cs.CoreV1().PersistentVolumeClaims(m.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return pvc.Status.Phase == corev1.ClaimBound, nil
	})
}

// poll runs cond every half second until it holds, fails, or ctx ends.
func (m *mover) poll(ctx context.Context, cond func() (bool, error)) error {
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(context.Context) (bool, error) { return cond() })
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("timed out (--timeout %s)", m.o.Timeout)
	}
	return err
}

// moverLabels mark the pods and claims of the move of claim: recommended
// application labels, which a provider admits on what is offloaded or
// reflected to it (a domain-prefixed key of ours would be refused).
func moverLabels(claim string) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "liqo-mover", "app.kubernetes.io/instance": claim}
}
