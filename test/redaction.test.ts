import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactCredentials, WipError } from '../lib/errors.js';

describe('credentials in messages', () => {
  it('hides the user-info of a URL, with or without its scheme', () => {
    assert.equal(redactCredentials("fatal: unable to access 'https://alex:s3cret@example.test/repo.git/'"), "fatal: unable to access 'https://***@example.test/repo.git/'");
    assert.equal(redactCredentials('fatal: unable to look up alex:s3cret@127.0.0.1 (port 9418)'), 'fatal: unable to look up ***@127.0.0.1 (port 9418)');
    assert.equal(redactCredentials('ssh://git:tok@host/x and https://u@host/y'), 'ssh://***@host/x and https://***@host/y');
    assert.equal(new WipError('git-failed', "git push failed: 'alex:pw@host' refused").message, "git push failed: '***@host' refused");
  });

  it('hides user-info holding a raw @ or a space, up to the last @ before the host', () => {
    assert.equal(redactCredentials("fatal: unable to access 'https://alex:pa@ss3cr3t@example.test/repo.git/'"), "fatal: unable to access 'https://***@example.test/repo.git/'");
    assert.equal(redactCredentials('From git://alex:s3cr3t pw@127.0.0.1:9418/r.git'), 'From git://***@127.0.0.1:9418/r.git');
    assert.equal(redactCredentials('git://a:p@s w@h1/x git://b:q@h2/y'), 'git://***@h1/x git://***@h2/y');
    assert.equal(redactCredentials('fatal: unable to look up alex:pa@ss3cr3t@127.0.0.1 (port 9418)'), 'fatal: unable to look up ***@127.0.0.1 (port 9418)');
  });

  it('leaves principals, forge identities and plain text alone', () => {
    for (const text of ['by github:alex', 'github@git.example.com:alex', 'Chant-Wip-By: gitlab:zoë', 'see refs/chant/wip/main@{1}', 'a: b@c']) {
      assert.equal(redactCredentials(text), text);
    }
  });
});
