"""Images: catch a model that learned the background, as LIME caught the "snow detector".

The lecture's wolf-vs-husky classifier was right for the wrong reason: the wolves stood on
snow. Here scikit-image's 200 small pictures (100 faces, 100 other things) get a bright square
in the top left corner of every *training* face, and a logistic regression learns the square.
It scores perfectly on held-out pictures made like its training data and is no better than a
coin on clean ones. Explanations over superpixels show why: the anchor of a face is the
corner alone, and LIME's top superpixel is the corner; a model trained on clean pictures is
anchored on the face.

Needs ``pip install 'skanchors[image,plot]'``. ``python images_leaky_faces.py picture.png``
also draws the explanations into ``picture.png`` (the user guide's figure).
"""

import sys
import warnings

import numpy as np
from skimage import data
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skanchors import AnchorExplainer, LimeExplainer
from skanchors.samplers import ImageSampler

X = data.lfw_subset()  # (200, 25, 25) grey pictures in [0, 1]
y = np.r_[np.ones(100, dtype=int), np.zeros(100, dtype=int)]  # 1: face
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)


def with_corner(images):
    """The pictures with a bright 6 x 6 square in the top left corner."""
    images = images.copy()
    images[:, :6, :6] = 1.0
    return images


def flatten(images):
    return images.reshape(len(images), -1)


leaky_train = X_train.copy()
leaky_train[y_train == 1] = with_corner(X_train[y_train == 1])
leaky = make_pipeline(FunctionTransformer(flatten), LogisticRegression(max_iter=2000))
leaky.fit(leaky_train, y_train)
clean = make_pipeline(FunctionTransformer(flatten), LogisticRegression(max_iter=2000))
clean.fit(X_train, y_train)

stamped_test = X_test.copy()
stamped_test[y_test == 1] = with_corner(X_test[y_test == 1])
print(f"leaky model, pictures made like its training data: {leaky.score(stamped_test, y_test):.2f}")
print(f"leaky model, clean pictures:                       {leaky.score(X_test, y_test):.2f}")
print(f"clean model, clean pictures:                       {clean.score(X_test, y_test):.2f}")

# Superpixels (SLIC) that are not kept turn black. A bright corner filled with its own mean
# colour (the default fill) would stay bright and hide the cue.
sampler = ImageSampler(segmentation="slic", fill=0.0)
face = with_corner(X_test[y_test == 1][:1])
corner = np.zeros((25, 25), dtype=bool)
corner[:6, :6] = True

anchors = AnchorExplainer(leaky, sampler=sampler, random_state=0).fit(leaky_train)
anchor = anchors.explain(face)[0]
print(f"\nleaky model: {anchor}")
print(
    f"  the anchor: {anchor.mask[corner].mean():.0%} of the corner, {anchor.mask.mean():.0%} of all"
)
fresh = anchors.perturbation_precision(anchor, random_state=0)
print(f"  precision on fresh perturbations: {fresh:.3f}")
assert anchor.mask[corner].all() and anchor.mask.mean() < 0.1

lime = LimeExplainer(leaky, sampler=sampler, n_samples=1000, random_state=0).fit(leaky_train)
explanation = lime.explain(face)[0]
print(f"  LIME: {explanation.as_list()[:3]}")
assert explanation.mask(1)[corner].mean() > 0.8

clean_anchors = AnchorExplainer(clean, sampler=sampler, random_state=0).fit(X_train)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    clean_anchor = clean_anchors.explain(X_test[y_test == 1][:1])[0]
print(f"\nclean model: {clean_anchor}")
share = clean_anchor.mask[corner].mean()
print(f"  the anchor: {share:.0%} of the corner, {clean_anchor.mask.mean():.0%} of all")
assert share < 0.5

# The explanations serialise as data (the superpixels run-length encoded, not the picture).
print(f"\nJSON of the leaky anchor: {len(anchor.to_json())} characters")

if len(sys.argv) > 1:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(9, 3.4), layout="constrained")
    anchor.plot(ax=axes[0])
    axes[0].set_title("leaky model: anchor", fontsize="small")
    explanation.plot(ax=axes[1], n_features=3)
    axes[1].set_title("leaky model: LIME, 3 superpixels", fontsize="small")
    clean_anchor.plot(ax=axes[2])
    axes[2].set_title("clean model: anchor", fontsize="small")
    fig.savefig(sys.argv[1], dpi=90)
    print(f"drew {sys.argv[1]}")
