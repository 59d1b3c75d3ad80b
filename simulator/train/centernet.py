#!/usr/bin/env python3
"""Trains the bee detector the agent ships and exports it to ONNX.

A small CenterNet-style network that sees the current frame and the one before it (six input channels): an
encoder down to 1/16 of the input, a light top-down path back to 1/4, and four outputs: a centre heatmap
(sigmoid), the box width and height in input pixels, the offset of the box centre from the heatmap cell's centre
in input pixels, and how far the bee moved since the earlier frame (CenterTrack's tracking offset), which lets
the tracker tell a bee that walked into a neighbour's place from the neighbour that stood still. The features stop
at stride 4, but each stride-4 cell predicts its 2x2 sub-cells (a pixel shuffle), so the outputs have stride 2: at
stride 4 a cell is 8 pixels of a 640x480 frame and two bees standing side by side merged into one peak (`--stride
1`: 4x4 sub-cells). Trained with CenterNet's penalty-reduced focal loss on the heatmap and L1 on size and offset at
the centre cells, on random crops of the frames that the simulator's training scenarios produce (see README.md).
Run through `pnpm --filter @hivegate/simulator train-detector`, which renders and exports the frames first.
"""

import argparse
import json
import math
import os
import sys
import time
import warnings

# Busy-waiting OpenMP threads crawl when other processes share the cores; passive waiting costs little when idle.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

FEATURE_STRIDE = 4  # of the deepest full-width features; a pixel shuffle takes the outputs finer
DEFAULT_STRIDE = 2  # of the outputs
OUTPUTS = 7  # heatmap, width, height, offset x, offset y, movement x, movement y
FRAMES = 2  # the current frame and the one before it, RGB each
# Multiples of 8 channels suit onnxruntime's convolution kernels: (12, 24, 48, 64) ran 5.5 ms a frame on one x86
# core, (16, 16, 48, 64) 3.1 ms; the width at stride 4, where most pixels are, is what costs.
DEFAULT_WIDTHS = "16,16,48,64"
# The head turns stride-4 features into 2x2 sub-cells of seven outputs each (28 values): wider than the features
# it reads, so that is not squeezed through 16 channels; it costs little, the head being one conv.
DEFAULT_HEAD_WIDTH = 32


def conv_bn_relu(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class BeeCenterNet(nn.Module):
    def __init__(self, widths, head_width, stride=DEFAULT_STRIDE):
        super().__init__()
        c2, c4, c8, c16 = widths
        self.shuffle = FEATURE_STRIDE // stride
        self.down2 = conv_bn_relu(3 * FRAMES, c2, 2)
        self.down4 = nn.Sequential(conv_bn_relu(c2, c4, 2), conv_bn_relu(c4, c4))
        self.down8 = nn.Sequential(conv_bn_relu(c4, c8, 2), conv_bn_relu(c8, c8))
        self.down16 = nn.Sequential(conv_bn_relu(c8, c16, 2), conv_bn_relu(c16, c16), conv_bn_relu(c16, c16))
        self.lateral16 = nn.Conv2d(c16, c8, 1)
        self.merge8 = conv_bn_relu(c8, c8)
        self.lateral8 = nn.Conv2d(c8, c4, 1)
        self.merge4 = conv_bn_relu(c4, c4)
        self.head = conv_bn_relu(c4, head_width)
        self.out = nn.Conv2d(head_width, OUTPUTS * self.shuffle * self.shuffle, 1)
        # Start with a low centre probability everywhere (CenterNet's prior), so the first steps are not spent
        # unlearning a flood of false peaks. Output channel c of the shuffle comes from inputs c*s*s .. (c+1)*s*s-1.
        with torch.no_grad():
            self.out.bias[: self.shuffle * self.shuffle].fill_(-2.19)

    def forward(self, x):
        f4 = self.down4(self.down2(x))
        f8 = self.down8(f4)
        f16 = self.down16(f8)
        f8 = self.merge8(f8 + F.interpolate(self.lateral16(f16), scale_factor=2.0, mode="nearest"))
        f4 = self.merge4(f4 + F.interpolate(self.lateral8(f8), scale_factor=2.0, mode="nearest"))
        out = F.pixel_shuffle(self.out(self.head(f4)), self.shuffle)
        return out[:, 0:1], out[:, 1:3], out[:, 3:5], out[:, 5:7]


class Exported(nn.Module):
    """The graph the agent runs: probabilities, not logits; sizes never negative."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, images):
        heat, size, offset, movement = self.net(images)
        return torch.sigmoid(heat), F.relu(size), offset, movement


def load_dataset(data_dir):
    with open(os.path.join(data_dir, "labels.json")) as f:
        labels = json.load(f)
    if labels.get("version") != 2:
        sys.exit(f"labels.json is version {labels.get('version')}; this trainer reads version 2 (frame pairs): export the data again")
    h, w = labels["inputHeight"], labels["inputWidth"]
    # Mapped, not read: a zoom-2 export is 15 GB, and the page cache keeps what the crops touch.
    raw = np.memmap(os.path.join(data_dir, "frames.u8"), dtype=np.uint8, mode="r")
    expected = labels["count"] * FRAMES * h * w * 3
    if raw.size != expected:
        sys.exit(f"frames.u8 holds {raw.size} bytes, labels.json promises {expected}")
    # [pair, earlier/labelled, y, x, rgb]
    frames = raw.reshape(labels["count"], FRAMES, h, w, 3)
    # Per box: cx, cy, w, h, movement x, movement y, whether the movement is known.
    boxes = []
    for f in labels["frames"]:
        rows = [list(b) + ([m[0], m[1], 1.0] if m is not None else [0.0, 0.0, 0.0]) for b, m in zip(f["boxes"], f["movements"])]
        boxes.append(np.asarray(rows, dtype=np.float32).reshape(-1, 7))
    clips = [f["clip"] for f in labels["frames"]]
    return labels, frames, boxes, clips


def slot_bands(labels, boxes, clips, margin_lengths=1.5):
    """Per clip, the box [x0, y0, x1, y1] the agent's slot pass covers: the entrance zone's bounding box and
    `margin_lengths` bee lengths around it (the agent's default margin), the bee length being the clip's median
    box length; None for a clip whose labels carry no zone."""
    lengths = {}
    for idx, clip in enumerate(clips):
        if len(boxes[idx]):
            lengths.setdefault(clip, []).append(boxes[idx][:, 2:4].max(1))
    bands = []
    for clip, meta in enumerate(labels["clips"]):
        zone = meta.get("zone")
        if not zone or clip not in lengths:
            bands.append(None)
            continue
        margin = margin_lengths * float(np.median(np.concatenate(lengths[clip])))
        xs, ys = [p[0] for p in zone], [p[1] for p in zone]
        bands.append((max(0.0, min(xs) - margin), max(0.0, min(ys) - margin),
                      min(float(labels["inputWidth"]), max(xs) + margin), min(float(labels["inputHeight"]), max(ys) + margin)))
    return bands


def to_input(pair):
    """A stored pair [earlier, labelled] of HxWx3 bytes as the model's input: labelled frame's RGB, then the earlier's."""
    t = torch.from_numpy(np.ascontiguousarray(pair[::-1])).float().div_(255.0)
    return t.permute(0, 3, 1, 2).reshape(3 * FRAMES, t.shape[1], t.shape[2])


def render_targets(batch_boxes, out_h, out_w, stride):
    """Heatmap (Gaussian per centre, 1 at the centre cell), size, offset and movement at centre cells, and their masks."""
    n = len(batch_boxes)
    heat = np.zeros((n, 1, out_h, out_w), np.float32)
    size = np.zeros((n, 2, out_h, out_w), np.float32)
    offset = np.zeros((n, 2, out_h, out_w), np.float32)
    movement = np.zeros((n, 2, out_h, out_w), np.float32)
    mask = np.zeros((n, 1, out_h, out_w), np.float32)
    moved_mask = np.zeros((n, 1, out_h, out_w), np.float32)
    ys = np.arange(out_h, dtype=np.float32)[:, None]
    xs = np.arange(out_w, dtype=np.float32)[None, :]
    for i, boxes in enumerate(batch_boxes):
        for cx, cy, bw, bh, mx, my, known in boxes:
            gx, gy = cx / stride - 0.5, cy / stride - 0.5
            ix, iy = int(round(gx)), int(round(gy))
            if ix < 0 or iy < 0 or ix >= out_w or iy >= out_h:
                continue
            sigma = min(1.5, max(0.5, min(bw, bh) / (3 * stride)))
            blob = np.exp(-((xs - gx) ** 2 + (ys - gy) ** 2) / (2 * sigma * sigma))
            np.maximum(heat[i, 0], blob, out=heat[i, 0])
            heat[i, 0, iy, ix] = 1.0
            size[i, :, iy, ix] = (bw, bh)
            offset[i, :, iy, ix] = (cx - (ix + 0.5) * stride, cy - (iy + 0.5) * stride)
            mask[i, 0, iy, ix] = 1.0
            if known:
                movement[i, :, iy, ix] = (mx, my)
                moved_mask[i, 0, iy, ix] = 1.0
    return tuple(torch.from_numpy(a) for a in (heat, size, offset, movement, mask, moved_mask))


def focal_loss(logits, target):
    """CenterNet's variant of the focal loss: positives are the cells equal to 1, negatives near a centre count less."""
    pos = target.eq(1).float()
    neg = 1.0 - pos
    log_p = F.logsigmoid(logits)
    log_not_p = F.logsigmoid(-logits)
    p = torch.sigmoid(logits)
    pos_loss = (log_p * (1 - p) ** 2 * pos).sum()
    neg_loss = (log_not_p * p ** 2 * (1 - target) ** 4 * neg).sum()
    return -(pos_loss + neg_loss) / pos.sum().clamp(min=1.0)


class Sampler:
    """Random crops at random scales, flipped, with light, colour and noise jitter; boxes and movements follow.

    Both frames of a pair get the same crop, flip and light (they are one camera a frame apart), their own noise.
    Now and then the earlier frame is replaced by the labelled one with every movement zero: what the agent feeds
    on its first frame, when nothing came before."""

    def __init__(self, frames, boxes, indices, crop_w, crop_h, seed, crowd_share=0.0, slot_share=0.0, clips=None, bands=None):
        self.frames, self.boxes, self.indices = frames, boxes, indices
        self.crop_w, self.crop_h = crop_w, crop_h
        self.rng = np.random.default_rng(seed)
        self.noise = torch.Generator().manual_seed(seed)
        self.crowd_share = crowd_share
        # The slot model only ever sees the band around the entrance zone; these crops are taken from there.
        self.slot_share = slot_share
        self.clips, self.bands = clips, bands
        self.band_indices = [idx for idx in indices if bands and bands[clips[idx]] is not None]
        # Where two bees are closer than a bee's length: where peaks merge and tracks swap.
        self.meetings = []
        for idx in indices:
            b = boxes[idx]
            if len(b) < 2:
                continue
            d = np.hypot(b[:, None, 0] - b[None, :, 0], b[:, None, 1] - b[None, :, 1])
            length = np.maximum(b[:, None, 2:4].max(2), b[None, :, 2:4].max(2))
            for i, j in zip(*np.nonzero(np.triu(d < length, 1))):
                self.meetings.append((idx, 0.5 * (b[i, 0] + b[j, 0]), 0.5 * (b[i, 1] + b[j, 1])))
        self.band_meetings = [m for m in self.meetings if self.in_band(*m)]

    def in_band(self, idx, x, y):
        band = self.bands[self.clips[idx]] if self.bands else None
        return band is not None and band[0] <= x <= band[2] and band[1] <= y <= band[3]

    def batch(self, n):
        rng = self.rng
        _, _, fh, fw, _ = self.frames.shape
        images, batch_boxes = [], []
        for _ in range(n):
            scale = math.exp(rng.uniform(math.log(0.8), math.log(1.25)))
            rw = min(fw, self.crop_w / scale)
            rh = min(fh, self.crop_h / scale)
            # Only drawn when asked for, so that runs without band crops keep the random stream they always had.
            from_band = self.slot_share > 0 and len(self.band_indices) > 0 and rng.random() < self.slot_share
            meetings = self.band_meetings if from_band else self.meetings
            if meetings and rng.random() < self.crowd_share:
                # A crop around two bees meeting, anywhere inside it.
                idx, mx, my = meetings[rng.integers(len(meetings))]
                x0 = float(np.clip(mx - rng.uniform(0.15, 0.85) * rw, 0, fw - rw))
                y0 = float(np.clip(my - rng.uniform(0.15, 0.85) * rh, 0, fh - rh))
            elif from_band:
                # A crop centred anywhere in the band around the entrance zone.
                idx = self.band_indices[rng.integers(len(self.band_indices))]
                bx0, by0, bx1, by1 = self.bands[self.clips[idx]]
                x0 = float(np.clip(rng.uniform(bx0, bx1) - rw / 2, 0, fw - rw))
                y0 = float(np.clip(rng.uniform(by0, by1) - rh / 2, 0, fh - rh))
            else:
                idx = self.indices[rng.integers(len(self.indices))]
                x0 = rng.uniform(0, fw - rw)
                y0 = rng.uniform(0, fh - rh)
            xa, ya = int(math.floor(x0)), int(math.floor(y0))
            xb, yb = min(fw, int(math.ceil(x0 + rw)) + 1), min(fh, int(math.ceil(y0 + rh)) + 1)
            region = to_input(self.frames[idx, :, ya:yb, xa:xb])
            sx = self.crop_w / (xb - xa)
            sy = self.crop_h / (yb - ya)
            image = F.interpolate(region[None], size=(self.crop_h, self.crop_w), mode="bilinear", align_corners=False, antialias=True)[0]
            b = self.boxes[idx].copy()
            b[:, 0] = (b[:, 0] - xa) * sx
            b[:, 1] = (b[:, 1] - ya) * sy
            b[:, 2] *= sx
            b[:, 3] *= sy
            b[:, 4] *= sx
            b[:, 5] *= sy
            if rng.random() < 0.05:
                image[3:] = image[:3]
                b[:, 4:6] = 0.0
                b[:, 6] = 1.0
            if rng.random() < 0.5:
                image = image.flip(2)
                b[:, 0] = self.crop_w - b[:, 0]
                b[:, 4] = -b[:, 4]
            image = self.photometric(image)
            images.append(image)
            batch_boxes.append(b)
        return torch.stack(images), batch_boxes

    def photometric(self, image):
        rng = self.rng
        frames = image.reshape(FRAMES, 3, image.shape[1], image.shape[2])
        if rng.random() < 0.15:
            frames = frames.mean(1, keepdim=True).expand(-1, 3, -1, -1)
        gamma = math.exp(rng.uniform(math.log(0.8), math.log(1.25)))
        gain = rng.uniform(0.6, 1.4) * rng.uniform(0.85, 1.15, size=3)
        bias = rng.uniform(-0.06, 0.06)
        frames = frames.clamp(0, 1).pow(gamma) * torch.tensor(gain, dtype=torch.float32)[None, :, None, None] + bias
        image = frames.reshape(3 * FRAMES, image.shape[1], image.shape[2])
        sigma = rng.uniform(0, 0.035)
        if sigma > 0.005:
            image = image + torch.randn(image.shape, generator=self.noise) * sigma
        return image.clamp(0, 1)


def decode_peaks(heat, threshold):
    """Centres (cell coordinates) of 3x3 local maxima above the threshold, per image."""
    pooled = F.max_pool2d(heat, 3, 1, 1)
    keep = (heat == pooled) & (heat >= threshold)
    return [torch.nonzero(keep[i, 0]).numpy() for i in range(heat.shape[0])]


def evaluate(net, frames, boxes, indices, stride, threshold=0.35):
    """Precision and recall of centre peaks on whole frames (a centre within a quarter bee length counts), and the
    mean error of the movement of the bees found, input pixels."""
    net.eval()
    tp = fp = fn = 0
    movement_error, movements = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(indices), 16):
            chunk = indices[start:start + 16]
            x = torch.stack([to_input(frames[i]) for i in chunk])
            heat, _, offset, movement = net(x)
            peaks = decode_peaks(torch.sigmoid(heat), threshold)
            for k, idx in enumerate(chunk):
                truth = boxes[idx]
                found = [((px + 0.5) * stride + offset[k, 0, py, px].item(), (py + 0.5) * stride + offset[k, 1, py, px].item()) for py, px in peaks[k]]
                used = set()
                for cx, cy, bw, bh, mx, my, known in truth:
                    gate = max(2.5, 0.25 * max(bw, bh))
                    best, best_d = None, gate
                    for j, (fx, fy) in enumerate(found):
                        if j in used:
                            continue
                        d = math.hypot(fx - cx, fy - cy)
                        if d < best_d:
                            best, best_d = j, d
                    if best is None:
                        fn += 1
                    else:
                        used.add(best)
                        tp += 1
                        if known:
                            py, px = peaks[k][best]
                            movement_error += math.hypot(movement[k, 0, py, px].item() - mx, movement[k, 1, py, px].item() - my)
                            movements += 1
                fp += len(found) - len(used)
    net.train()
    precision = tp / max(1, tp + fp)
    recall = tp / max(1, tp + fn)
    return precision, recall, movement_error / max(1, movements)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="folder with frames.u8 and labels.json")
    parser.add_argument("--out", required=True, help="ONNX file to write")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=16000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--crop", default="192x160", help="training crop WxH in input pixels")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--widths", default=DEFAULT_WIDTHS, help="channels at strides 2, 4, 8 and 16")
    parser.add_argument("--stride", type=int, choices=(1, 2), default=DEFAULT_STRIDE, help="input pixels per output cell")
    parser.add_argument("--zoom", type=int, choices=(1, 2), default=1,
                        help="scale of the input against a 320x240 frame; a zoom-2 model is exported for any input size, multiples of 16")
    parser.add_argument("--head", type=int, default=DEFAULT_HEAD_WIDTH, help="channels of the output head")
    parser.add_argument("--crowd-share", type=float, default=0.5, help="share of crops centred where two bees meet")
    parser.add_argument("--slot-share", type=float, default=0.0,
                        help="share of crops taken from the band around the entrance zone (the agent's slot pass); "
                             "the crowd share applies within them to meetings in the band")
    parser.add_argument("--val-clips", default="", help="comma-separated clip indices kept out of training for validation")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    crop_w, crop_h = (int(v) for v in args.crop.split("x"))

    labels, frames, boxes, clips = load_dataset(args.data)
    val_clips = {int(v) for v in args.val_clips.split(",") if v != ""}
    train_idx = np.array([i for i, c in enumerate(clips) if c not in val_clips])
    val_idx = np.array([i for i, c in enumerate(clips) if c in val_clips])
    # A quarter of the validation frames is plenty to follow progress.
    val_idx = val_idx[::4]
    print(f"data: {labels['count']} frames {labels['inputWidth']}x{labels['inputHeight']} from {len(labels['clips'])} clips; "
          f"{len(train_idx)} for training, {len(val_idx)} for validation; {sum(len(b) for b in boxes)} boxes", flush=True)

    widths = tuple(int(v) for v in args.widths.split(","))
    if len(widths) != 4:
        sys.exit(f"--widths takes four channel counts, got {args.widths}")
    net = BeeCenterNet(widths, args.head, args.stride)
    params = sum(p.numel() for p in net.parameters())
    print(f"model: {params} parameters ({params * 4 / 1024:.0f} KB as float32)", flush=True)
    if not 0.0 <= args.slot_share <= 1.0:
        sys.exit(f"--slot-share must be from 0 to 1, got {args.slot_share}")
    bands = slot_bands(labels, boxes, clips)
    if args.slot_share > 0 and not any(band is not None for band in bands):
        sys.exit("--slot-share needs the entrance zone of each clip in labels.json: export the data again")
    sampler = Sampler(frames, boxes, train_idx, crop_w, crop_h, args.seed, args.crowd_share, args.slot_share, clips, bands)
    print(f"sampler: {len(sampler.meetings)} meetings of two bees closer than a bee's length ({len(sampler.band_meetings)} in the slot band); "
          f"{args.crowd_share:.0%} of crops centred on one, {args.slot_share:.0%} of crops from the slot band", flush=True)
    optimizer = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    warmup = min(300, args.steps // 10)

    def lr_at(step):
        if step < warmup:
            return args.lr * (step + 1) / warmup
        progress = (step - warmup) / max(1, args.steps - warmup)
        return 1e-5 + (args.lr - 1e-5) * 0.5 * (1 + math.cos(math.pi * progress))

    started = time.time()
    running = None
    out_h, out_w = crop_h // args.stride, crop_w // args.stride
    for step in range(args.steps):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step)
        images, batch_boxes = sampler.batch(args.batch)
        heat_t, size_t, offset_t, movement_t, mask, moved_mask = render_targets(batch_boxes, out_h, out_w, args.stride)
        heat, size, offset, movement = net(images)
        positives = mask.sum().clamp(min=1.0)
        heat_loss = focal_loss(heat, heat_t)
        size_loss = (F.l1_loss(size, size_t, reduction="none") * mask).sum() / positives
        offset_loss = (F.l1_loss(offset, offset_t, reduction="none") * mask).sum() / positives
        movement_loss = (F.l1_loss(movement, movement_t, reduction="none") * moved_mask).sum() / moved_mask.sum().clamp(min=1.0)
        loss = heat_loss + 0.1 * size_loss + 0.5 * offset_loss + 0.2 * movement_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        parts = np.array([loss.item(), heat_loss.item(), size_loss.item(), offset_loss.item(), movement_loss.item()])
        running = parts if running is None else 0.98 * running + 0.02 * parts
        done = step + 1
        if done % 100 == 0 or done == args.steps:
            elapsed = time.time() - started
            eta = elapsed / done * (args.steps - done)
            print(f"step {done}/{args.steps}  loss {running[0]:.3f} (heatmap {running[1]:.3f}, size {running[2]:.2f} px, offset {running[3]:.2f} px, movement {running[4]:.2f} px)"
                  f"  lr {lr_at(step):.1e}  {elapsed / 60:.1f} min, about {eta / 60:.1f} min left", flush=True)
        if len(val_idx) > 0 and (done % 1000 == 0 or done == args.steps):
            precision, recall, movement_error = evaluate(net, frames, boxes, val_idx, args.stride)
            print(f"validation at step {done}: precision {precision:.3f}, recall {recall:.3f} (peaks >= 0.35 on whole frames), "
                  f"movement error {movement_error:.2f} px", flush=True)

    net.eval()
    exported = Exported(net).eval()
    dummy = torch.zeros(1, 3 * FRAMES, labels["inputHeight"], labels["inputWidth"])
    tmp = args.out + ".tmp"
    # torch 1.13's exporter warns about constants it cannot shape-infer; the checker below is the real test.
    warnings.filterwarnings("ignore", category=UserWarning, module="torch.onnx")
    outputs = ["heatmap", "size", "offset", "movement"]
    # A zoom-2 model runs on a band around the entrance slot whose size depends on the camera's zone.
    dynamic = {name: {2: "height", 3: "width"} for name in ["images", *outputs]} if args.zoom > 1 else None
    torch.onnx.export(exported, dummy, tmp, input_names=["images"], output_names=outputs, opset_version=13, do_constant_folding=True, dynamic_axes=dynamic)
    import onnx

    model = onnx.load(tmp)
    onnx.checker.check_model(model)
    for key, value in {
        "hivegate.kind": "bee-centernet",
        "hivegate.seed": str(args.seed),
        "hivegate.steps": str(args.steps),
        "hivegate.stride": str(args.stride),
        "hivegate.zoom": str(args.zoom),
        "hivegate.slot_share": str(args.slot_share),
        "hivegate.frames": str(FRAMES),
        "hivegate.widths": ",".join(str(w) for w in widths),
        "hivegate.head": str(args.head),
        "hivegate.training_frames": str(len(train_idx)),
    }.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, args.out)
    os.remove(tmp)
    print(f"wrote {args.out} ({os.path.getsize(args.out) / 1024:.0f} KB) after {(time.time() - started) / 60:.1f} min", flush=True)


if __name__ == "__main__":
    main()
