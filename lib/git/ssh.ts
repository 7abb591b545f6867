// How ssh runs under chant: in batch mode however the host named it. git picks its ssh program
// and the options it passes the way connect.c does (get_ssh_command, determine_ssh_variant in
// git 2.39): GIT_SSH_COMMAND, else core.sshCommand, else GIT_SSH, else `ssh`; the variant from
// GIT_SSH_VARIANT or ssh.variant, else from the program's name. chant hands git one
// GIT_SSH_COMMAND built from the same choice, with the batch option that variant takes.

/**
 * The ssh variants git knows (`ssh.variant`).
 * @internal
 */
export type SshVariant = 'auto' | 'simple' | 'ssh' | 'plink' | 'putty' | 'tortoiseplink';

/**
 * What the checkout's configuration says about ssh.
 * @internal
 */
export interface SshSettings {
  /** `core.sshCommand`, or null. */
  sshCommand: string | null;
  /** `ssh.variant`, or null. */
  sshVariant: string | null;
}

/**
 * The variables that make git run ssh in batch mode, so that a key with a passphrase, a host
 * asking for a password or an unknown host key fails at once: `GIT_SSH_COMMAND`, built from the
 * program git would have run.
 *
 * - OpenSSH (`ssh`, or any command line whose variant git cannot tell from its name, as git
 *   then probes it as OpenSSH): `-o BatchMode=yes`.
 * - PuTTY's `plink` and `putty`: `-batch`. TortoisePlink: nothing, git adds `-batch` itself.
 * - `simple`, and a `GIT_SSH` program whose variant git cannot tell from its name: nothing, as
 *   such a program takes only a host and a command. It still cannot prompt: git runs in a
 *   session without a terminal (see the runner), and askpass programs are off.
 *
 * @param settings - `core.sshCommand` and `ssh.variant` as configured
 * @param ambient - the environment chant runs in
 * @returns the variables to add to a network call's environment
 * @internal
 */
export function sshEnvironment(settings: SshSettings, ambient: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> {
  const commandLine = nonEmpty(ambient.GIT_SSH_COMMAND) ?? nonEmpty(settings.sshCommand);
  const program = commandLine === null ? nonEmpty(ambient.GIT_SSH) ?? 'ssh' : null;
  const command = commandLine ?? shellQuote(program as string);
  const named = variantOf(commandLine === null ? (program as string) : firstWord(commandLine));
  const chosen = (nonEmpty(ambient.GIT_SSH_VARIANT) ?? nonEmpty(settings.sshVariant))?.toLowerCase() ?? 'auto';
  const variant = chosen === 'auto' ? named : chosen;
  switch (variant) {
    case 'ssh':
      return { GIT_SSH_COMMAND: `${command} -o BatchMode=yes` };
    case 'plink':
    case 'putty':
      return { GIT_SSH_COMMAND: `${command} -batch` };
    case 'auto':
      return { GIT_SSH_COMMAND: commandLine === null ? command : `${command} -o BatchMode=yes` };
    default:
      return { GIT_SSH_COMMAND: command };
  }
}

function nonEmpty(value: string | null | undefined): string | null {
  return value === undefined || value === null || value.trim().length === 0 ? null : value;
}

/** The variant git reads from a program's name, as determine_ssh_variant does. */
function variantOf(program: string): SshVariant {
  const name = (program.split(/[\\/]/).at(-1) ?? '').toLowerCase().replace(/\.exe$/, '');
  if (name === 'ssh') return 'ssh';
  if (name === 'plink') return 'plink';
  if (name === 'tortoiseplink') return 'tortoiseplink';
  return 'auto';
}

/** The first word of a command line, its quotes removed, as git's split_cmdline reads it. */
function firstWord(commandLine: string): string {
  let word = '';
  let quote: string | null = null;
  const text = commandLine.trimStart();
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i] as string;
    if (quote !== null) {
      if (char === quote) quote = null;
      else if (char === '\\' && quote === '"' && i + 1 < text.length) word += text[(i += 1)];
      else word += char;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === '\\' && i + 1 < text.length) word += text[(i += 1)];
    else if (/\s/.test(char)) break;
    else word += char;
  }
  return word;
}

/** A program path as one shell word. */
function shellQuote(path: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}
