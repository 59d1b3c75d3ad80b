import { useId, useRef, useState } from 'preact/hooks';
import { checkCustomRange, fromLocalInput, presetRange, PRESETS, toLocalInput, type Preset, type RangeProblem, type TimeRange } from '../lib/time-range.ts';

/** Presets as a radio group (arrow keys move between them), plus a custom from/to range applied with a button. */
export function RangePicker({ range, onChange }: { range: TimeRange; onChange: (range: TimeRange) => void }) {
  const [custom, setCustom] = useState(range.preset === 'custom');
  const [fromText, setFromText] = useState(toLocalInput(range.from));
  const [toText, setToText] = useState(toLocalInput(range.to));
  const [problem, setProblem] = useState<RangeProblem | undefined>();
  const id = useId();
  const fromInput = useRef<HTMLInputElement>(null);
  const toInput = useRef<HTMLInputElement>(null);
  /** The field at fault is marked invalid and names the message; the other is left alone. */
  const faultProps = (field: RangeProblem['field']) =>
    problem?.field === field ? { 'aria-invalid': true as const, 'aria-describedby': `${id}-problem` } : {};
  const selected = custom ? 'custom' : range.preset;

  const choose = (value: Preset | 'custom') => {
    setProblem(undefined);
    if (value === 'custom') {
      setCustom(true);
      setFromText(toLocalInput(range.from));
      setToText(toLocalInput(range.to));
      return;
    }
    setCustom(false);
    onChange(presetRange(value));
  };

  const apply = (event: Event) => {
    event.preventDefault();
    const from = fromLocalInput(fromText);
    const to = fromLocalInput(toText);
    const error = checkCustomRange(from, to);
    setProblem(error);
    if (error) (error.field === 'from' ? fromInput : toInput).current?.focus();
    else if (from && to) onChange({ preset: 'custom', from, to });
  };

  return (
    <form class="range-picker" onSubmit={apply} aria-label="Time range">
      <fieldset class="segmented">
        <legend>Time range</legend>
        {[...(Object.keys(PRESETS) as Preset[]), 'custom' as const].map((value) => (
          <label key={value} class={selected === value ? 'selected' : undefined}>
            <input type="radio" name={`${id}-range`} value={value} checked={selected === value} onChange={() => choose(value)} />
            <span>{value === 'custom' ? 'Custom' : PRESETS[value].label}</span>
          </label>
        ))}
      </fieldset>
      {custom && (
        <div class="custom-range">
          <label>
            From
            <input type="datetime-local" ref={fromInput} value={fromText} onInput={(e) => setFromText(e.currentTarget.value)} required {...faultProps('from')} />
          </label>
          <label>
            To
            <input type="datetime-local" ref={toInput} value={toText} onInput={(e) => setToText(e.currentTarget.value)} required {...faultProps('to')} />
          </label>
          <button type="submit" class="button">
            Apply
          </button>
          {problem && (
            <p class="field-error" id={`${id}-problem`} role="alert">
              {problem.message}
            </p>
          )}
        </div>
      )}
    </form>
  );
}
