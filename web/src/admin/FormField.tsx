/** A labelled field of an admin form, with the server's problem for it shown below. */
import type { ReactNode } from "react";

export function FormField(props: {
  label: string;
  problem: string | undefined;
  children: ReactNode;
}): ReactNode {
  return (
    <div className="form-field">
      <label>
        {props.label}
        <br />
        {props.children}
      </label>
      {props.problem && (
        <p className="field-problem error" role="alert">
          {props.problem}
        </p>
      )}
    </div>
  );
}
