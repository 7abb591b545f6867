/**
 * This tool's version, as documents print it in `chant`. A test holds it equal to package.json's.
 * @public
 */
export const VERSION = '0.1.0';

/**
 * The version of the chant contract this tool implements; a declaration whose `minReader` is
 * newer is refused with `reader-too-old`.
 * @public
 */
export const CONTRACT_VERSION = '0.103.0';
