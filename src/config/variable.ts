import { z } from 'zod';

/** What docs/configuration.md tells an operator about one environment variable. */
export interface Variable {
  readonly name: string;
  readonly description: string;
  /** The value used when the variable is unset or empty, written as an operator would set it. */
  readonly default?: string;
  /** What happens when it is unset and there is no `default` (a default that depends on others). */
  readonly unset?: string;
}

/** Every variable's schema: `loadConfig` finds them where they sit in the sections' shapes. */
export const variables = z.registry<Variable>();

declare const NAME: unique symbol;
/** A variable's schema, typed with its name (a phantom) so that the names form a type. */
type Named<Name extends string, Schema> = Schema & { readonly [NAME]: Name };

/** The names of the variables a schema reads, through its objects and transforms. */
export type VariableNames<Schema> =
  Schema extends Named<infer Name, unknown>
    ? Name
    : Schema extends z.ZodPipe<infer In>
      ? VariableNames<In>
      : Schema extends z.ZodObject<infer Shape>
        ? { [Key in keyof Shape]: VariableNames<Shape[Key]> }[keyof Shape]
        : never;

type About = Omit<Variable, 'name'>;
type Text = z.ZodType<unknown, string | undefined>;

/**
 * One environment variable, written where its value lands in its section. With `unset`, a section
 * derives the value when there is none, so the variable is optional.
 */
export function env<const Name extends string, Schema extends Text>(
  name: Name,
  schema: Schema,
  about: About & { readonly unset: string },
): Named<Name, z.ZodOptional<Schema>>;
export function env<const Name extends string, Schema extends Text>(
  name: Name,
  schema: Schema,
  about: About & { readonly unset?: undefined },
): Named<Name, Schema>;
export function env(name: string, schema: Text, about: About): Text {
  // A fresh schema each time: parsers like `flag` are shared by several variables.
  const own = about.unset === undefined ? schema.clone() : schema.optional();
  return own.register(variables, { name, ...about });
}

/**
 * Runs a rule across variables whenever those it reads (their paths, dotted) were read, whatever
 * else failed, so that its problem is reported with every other.
 */
export const whenRead = (...paths: readonly string[]) => ({
  when: ({ issues }: z.core.ParsePayload) =>
    !issues.some((issue) =>
      paths.some((path) => `${(issue.path ?? []).join('.')}.`.startsWith(`${path}.`)),
    ),
});

/** Why an upstream's URL is missing: `npm start` would have started a simulator for it. */
export const requiredUrl = (upstream: string) =>
  `is required: the ${upstream}'s URL (\`npm start\` simulates it outside production)`;

export const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^\d+$/, { error: 'must be a whole number' })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error: `must be at least ${min}` })
        .max(max, { error: `must be at most ${max}` }),
    );

export const flag = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1');

export const oneOf = <const Values extends readonly [string, ...string[]]>(values: Values) =>
  z.enum(values, { error: `must be one of ${values.join(', ')}` });

export const httpUrl = (suffix?: string) =>
  z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .refine(
      (url) =>
        suffix === undefined ||
        !URL.canParse(url) ||
        new URL(url).pathname.replace(/\/+$/, '').endsWith(suffix),
      { error: `must end in ${suffix}` },
    )
    .transform((url) => url.replace(/\/+$/, ''));

/** A comma-separated list, each item trimmed and checked by `item`; one problem for them all. */
export const list = <Item extends z.ZodType<unknown, string>>(item: Item) =>
  z.string().transform((value, context) => {
    const items = value.split(',').map((each) => each.trim());
    const parsed = z.array(item).safeParse(items.filter(Boolean));
    if (parsed.success) return parsed.data;
    context.addIssue({ code: 'custom', message: parsed.error.issues[0]?.message ?? '' });
    return z.NEVER;
  });

export const fraction = z
  .string()
  .regex(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, { error: 'must be a number from 0 to 1' })
  .transform(Number);
